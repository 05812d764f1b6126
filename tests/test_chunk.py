"""Chunking over real tree-sitter grammars: symbols, kinds, line ranges, imports and calls."""

from __future__ import annotations

import hashlib
import textwrap

import pytest

from code_evidence.api import Chunk
from code_evidence.config import IndexConfig
from code_evidence.filekinds import file_flags
from code_evidence.index.chunk import chunk_file, detect_language


def _cfg(**kw: int) -> IndexConfig:
    return IndexConfig(**kw)


def _src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _shape(chunks: list[Chunk]) -> list[tuple[int, int, str, str]]:
    return [(c.start, c.end, c.kind, c.symbol) for c in chunks]


def _by_symbol(chunks: list[Chunk], symbol: str) -> Chunk:
    (found,) = [c for c in chunks if c.symbol == symbol]
    return found


def _check_text(chunks: list[Chunk], text: str) -> None:
    lines = text.splitlines()
    for c in chunks:
        assert c.text == "\n".join(lines[c.start - 1 : c.end])


PY = _src(
    '''
    """Module doc."""
    from __future__ import annotations

    import os.path
    from . import json, views
    from ..pkg.sub import thing as other

    LIMIT = compute_limit()


    # Helper comment stays with the function.
    @decorator(arg)
    def top(x):
        def inner():
            return helper(x)
        return inner()


    class Store(Base):
        """Holds things."""

        size = make_size()

        @property
        def total(self):
            return self.items.count()

        def add(self, item):
            validate(item)
            return Store()


    if __name__ == "__main__":
        main()
    '''
)


def test_python_definitions_and_grouping() -> None:
    chunks = chunk_file("pkg/mod.py", PY, _cfg())
    assert _shape(chunks) == [
        (1, 8, "module", ""),
        (11, 16, "function", "top"),
        (19, 22, "class", "Store"),
        (24, 26, "method", "Store.total"),
        (28, 30, "method", "Store.add"),
        (33, 34, "module", ""),
    ]
    _check_text(chunks, PY)
    assert all(c.language == "python" for c in chunks)
    assert chunks[0].imports == (
        "os.path",
        ".json",
        ".views",
        "..pkg.sub",
        "..pkg.sub.thing",
    )
    assert all(c.imports == chunks[0].imports for c in chunks)
    top = _by_symbol(chunks, "top")
    # Nested function stays inside; decorator and the comment above it are attached.
    assert top.text.startswith("# Helper comment")
    assert top.calls == ("decorator", "helper", "inner")
    assert _by_symbol(chunks, "Store").calls == ("make_size",)
    assert _by_symbol(chunks, "Store").text.startswith('class Store(Base):\n    """Holds')
    total = _by_symbol(chunks, "Store.total")
    assert total.text.lstrip().startswith("@property")
    assert total.calls == ("count",)
    assert _by_symbol(chunks, "Store.add").calls == ("validate", "Store")
    assert chunks[0].calls == ("compute_limit",)
    assert chunks[-1].calls == ("main",)


def test_python_class_without_methods_and_members_after_methods() -> None:
    text = _src(
        """
        class Plain:
            a = 1
            b = 2


        class Mixed:
            def first(self):
                pass

            later = property(first)

            class Inner:
                def deep(self):
                    pass
        """
    )
    chunks = chunk_file("m.py", text, _cfg())
    assert _shape(chunks) == [
        (1, 3, "class", "Plain"),
        (6, 6, "class", "Mixed"),
        (7, 8, "method", "Mixed.first"),
        (10, 10, "class", "Mixed"),
        (12, 12, "class", "Mixed.Inner"),
        (13, 14, "method", "Mixed.Inner.deep"),
    ]
    assert chunks[3].calls == ("property",)


def test_long_function_is_split_with_overlap() -> None:
    body = "\n".join(f"    step_{i}()" for i in range(60))
    text = f"def long():\n{body}\n"
    chunks = chunk_file("long.py", text, _cfg(max_chunk_lines=25))
    assert [(c.start, c.end) for c in chunks] == [(1, 25), (18, 42), (35, 59), (52, 61)]
    assert {(c.kind, c.symbol) for c in chunks} == {("function", "long")}
    assert all(c.end - c.start + 1 <= 25 for c in chunks)
    assert chunks[1].calls[0] == "step_16"  # line 18 holds step_16
    assert len({c.hash for c in chunks}) == 4
    _check_text(chunks, text)


def test_top_level_groups_break_at_max_lines() -> None:
    text = "\n".join(f"X{i} = {i}" for i in range(50)) + "\n"
    chunks = chunk_file("consts.py", text, _cfg(max_chunk_lines=20))
    assert [(c.start, c.end, c.kind) for c in chunks] == [
        (1, 20, "module"),
        (21, 40, "module"),
        (41, 50, "module"),
    ]


JS = _src(
    """
    import React, { useState } from "react";
    import { helper } from "./utils";
    const fs = require("fs");
    export { thing } from "../shared/thing";

    /** Adds two numbers. */
    export function add(a, b) {
      return sum(a, b);
    }

    export const double = (x) => multiply(x, 2);

    const legacy = function () {
      return fs.readFileSync("x");
    };

    export default class Widget extends Base {
      static count = 0;

      constructor(el) {
        super(el);
        this.init();
      }

      render() {
        return new View(this.el);
      }
    }

    legacy();
    """
)


def test_javascript() -> None:
    chunks = chunk_file("web/app.js", JS, _cfg())
    assert detect_language("web/app.js") == "javascript"
    assert _shape(chunks) == [
        (1, 4, "module", ""),
        (6, 9, "function", "add"),
        (11, 11, "function", "double"),
        (13, 15, "function", "legacy"),
        (17, 18, "class", "Widget"),
        (20, 23, "method", "Widget.constructor"),
        (25, 27, "method", "Widget.render"),
        (30, 30, "module", ""),
    ]
    _check_text(chunks, JS)
    assert chunks[0].imports == ("react", "./utils", "fs", "../shared/thing")
    assert chunks[0].calls == ("require",)
    assert _by_symbol(chunks, "add").calls == ("sum",)
    assert _by_symbol(chunks, "double").calls == ("multiply",)
    assert _by_symbol(chunks, "legacy").calls == ("readFileSync",)
    assert _by_symbol(chunks, "Widget.constructor").calls == ("init",)
    assert _by_symbol(chunks, "Widget.render").calls == ("View",)
    assert chunks[-1].calls == ("legacy",)


CJS = _src(
    """
    'use strict'
    var proto = module.exports = {}

    function Reply (res) {
      this.res = res
    }

    /**
     * Send a response.
     */

    Reply.prototype.send = function (payload) {
      return this.res.end(payload)
    }

    res.set =
    res.header = function header (field, val) {
      return this.setHeader(field, val)
    }

    exports.compileTrust = function (val) {
      return val
    }

    module.exports.etag = async function () {}

    module.exports = function createApplication () {
      return new Reply()
    }

    module.exports.Layer = class {
      handle () {
        return 1
      }
    }

    handlers[0].run = function () {}
    this.done = () => true
    total = 2
    """
)


def test_javascript_assigned_definitions() -> None:
    """CommonJS and pre-class code define functions by assigning them to properties; each is a
    chunk under the name it is called by, and a ``/** */`` block across a blank line is its."""
    chunks = chunk_file("lib/reply.js", CJS, _cfg())
    assert _shape(chunks) == [
        (1, 2, "module", ""),
        (4, 6, "function", "Reply"),
        (8, 14, "method", "Reply.send"),
        (16, 19, "method", "res.set"),
        (21, 23, "function", "compileTrust"),
        (25, 25, "function", "etag"),
        (27, 29, "function", "createApplication"),
        (31, 31, "class", "Layer"),
        (32, 34, "method", "Layer.handle"),
        (37, 39, "module", ""),
    ]
    _check_text(chunks, CJS)
    assert _by_symbol(chunks, "Reply.send").calls == ("end",)
    # TypeScript reads the same statements the same way.
    ts_chunks = chunk_file("lib/reply.ts", CJS, _cfg())
    assert [c.symbol for c in ts_chunks] == [c.symbol for c in chunks]


OBJECTS = _src(
    """
    const proto = module.exports = {
      inspect () {
        return this
      },

      throw (...args) {
        throw createError(...args)
      },

      get body () {
        return this._body
      },

      status: 200,
    }

    const helpers = {
      parse: function (s) {
        return s.trim()
      },
      format (s) {
        return s
      },
    }

    const rootHandler = {
      func: handle,
      toJSON () { return 'handle()' },
    }

    const config = { port: 1, host: 'x' }

    Router.prototype = {
      route (path) { return path },
      use (fn) { return fn },
    }

    /************************************/
    /********** FLOW CONTROL ************/
    /************************************/

    function next () {}
    """
)


def test_javascript_objects_of_methods() -> None:
    """An object literal of methods is a container like a class: koa's ``module.exports = {
    throw () {…} }`` in ``lib/context.js`` holds ``context.throw`` (the module's own name), a
    ``const helpers = {…}`` holds ``helpers.parse``, ``Router.prototype = {…}`` holds
    ``Router.use``; an object with one method is one chunk,
    an object of data stays module code, and a banner of stars heads the function below it
    across a blank line (a section heading, not its doc: alone it was a chunk of three lines
    that pointed at nothing)."""
    chunks = chunk_file("lib/context.js", OBJECTS, _cfg())
    assert _shape(chunks) == [
        (1, 1, "object", "context"),
        (2, 4, "method", "context.inspect"),
        (6, 8, "method", "context.throw"),
        (10, 12, "method", "context.body"),
        (14, 14, "object", "context"),
        (17, 17, "object", "helpers"),
        (18, 20, "method", "helpers.parse"),
        (21, 23, "method", "helpers.format"),
        (26, 29, "object", "rootHandler"),
        (31, 31, "module", ""),
        (33, 33, "object", "Router"),
        (34, 34, "method", "Router.route"),
        (35, 35, "method", "Router.use"),
        (38, 42, "function", "next"),
    ]
    _check_text(chunks, OBJECTS)
    assert _by_symbol(chunks, "context.throw").calls == ("createError",)
    # An index file's module is its folder.
    assert chunk_file("lib/context/index.js", OBJECTS, _cfg())[0].symbol == "context"


TS = _src(
    """
    import type { Config } from "./config";
    import fs = require("fs");

    export interface Shape {
      area(): number;
    }

    export type Id = string | number;

    export enum Color {
      Red,
      Green,
    }

    export abstract class Base<T> implements Shape {
      protected items: T[] = [];

      @memo()
      area(): number {
        return Math.max(0, this.compute<T>());
      }

      handle = (e: Event): void => {
        this.emit(e);
      };
    }
    """
)


def test_typescript() -> None:
    chunks = chunk_file("src/shape.ts", TS, _cfg())
    assert _shape(chunks) == [
        (1, 2, "module", ""),
        (4, 6, "interface", "Shape"),
        (8, 8, "type", "Id"),
        (10, 13, "enum", "Color"),
        (15, 16, "class", "Base"),
        (18, 21, "method", "Base.area"),
        (23, 25, "method", "Base.handle"),
    ]
    assert all(c.language == "typescript" for c in chunks)
    assert chunks[0].imports == ("./config", "fs")
    assert _by_symbol(chunks, "Base.area").calls == ("memo", "max", "compute")
    assert _by_symbol(chunks, "Base.handle").calls == ("emit",)
    tsx = chunk_file("src/App.tsx", "export const App = () => <div>{render()}</div>;\n", _cfg())
    assert _shape(tsx) == [(1, 1, "function", "App")]
    assert tsx[0].language == "tsx"
    assert tsx[0].calls == ("render",)


GO = _src(
    """
    package server

    import (
    \t"fmt"
    \tstore "github.com/acme/app/internal/store"
    )

    // Server serves requests.
    type Server struct {
    \tdb *store.DB
    }

    type (
    \tID int
    \tHandler interface{ Serve() }
    )

    // Run starts the server.
    func (s *Server) Run(port int) error {
    \tfmt.Println(port)
    \treturn s.db.Open()
    }

    func New[T any]() *Server {
    \treturn &Server{db: store.Connect()}
    }

    var defaultPort = 8080
    """
)


TS_SCOPES = _src(
    """
    export namespace util {
      export type Omit<T, K> = Pick<T, Exclude<keyof T, K>>;
      export function assertNever(x: never): never {
        throw new Error(String(x));
      }
    }

    declare module "express" {
      interface Request {
        user?: string;
      }
    }

    export const handlers = {
      onClick(e: Event) {
        log(e);
      },
      onKey: (e: KeyboardEvent) => {
        log(e.key);
      },
    } satisfies Record<string, Function>;
    """
)


def test_typescript_namespaces_and_ambient_modules_are_scopes() -> None:
    """zod's ``export namespace util { … }`` was one window of everything in it: its items are
    definitions under its name now, as are those of a ``declare module``; an object of methods
    followed by ``satisfies T`` (or ``as const``) is still an object of methods."""
    chunks = chunk_file("src/helpers/util.ts", TS_SCOPES, _cfg())
    assert _shape(chunks) == [
        (2, 2, "type", "util.Omit"),
        (3, 5, "function", "util.assertNever"),
        (9, 11, "interface", "express.Request"),
        (14, 14, "object", "handlers"),
        (15, 17, "method", "handlers.onClick"),
        (18, 20, "method", "handlers.onKey"),
    ]
    _check_text(chunks, TS_SCOPES)


def test_go() -> None:
    chunks = chunk_file("internal/server/server.go", GO, _cfg())
    assert _shape(chunks) == [
        (1, 6, "module", ""),
        (8, 11, "struct", "Server"),
        (13, 14, "type", "ID"),
        (15, 16, "interface", "Handler"),
        (18, 22, "method", "Server.Run"),
        (24, 26, "function", "New"),
        (28, 28, "module", ""),
    ]
    _check_text(chunks, GO)
    assert chunks[0].imports == ("fmt", "github.com/acme/app/internal/store")
    assert _by_symbol(chunks, "Server.Run").calls == ("Println", "Open")
    assert _by_symbol(chunks, "New").calls == ("Connect",)


RUST = _src(
    """
    use crate::config::{Config, loader::load as load_cfg, self};
    use super::util::*;
    use std::io;
    mod parser;

    /// A token.
    #[derive(Debug)]
    pub struct Token {
        kind: Kind,
    }

    pub enum Kind {
        Word,
    }

    impl Token {
        /// Makes one.
        pub fn new() -> Self {
            let v = Vec::new();
            v.len();
            parse::<u8>(v);
            println!("made");
            Token { kind: Kind::Word }
        }
    }

    pub trait Visit {
        fn visit(&self);
        fn done(&self) -> bool {
            check(self)
        }
    }

    mod helpers {
        pub fn assist() {
            crate::run();
        }
    }

    fn main() {
        Token::new();
    }
    """
)


def test_rust() -> None:
    chunks = chunk_file("src/lib.rs", RUST, _cfg())
    assert _shape(chunks) == [
        (1, 4, "module", ""),
        (6, 10, "struct", "Token"),
        (12, 14, "enum", "Kind"),
        (16, 24, "method", "Token.new"),  # the bare `impl Token {` opens its first method
        (27, 28, "trait", "Visit"),
        (29, 31, "method", "Visit.done"),
        (35, 37, "function", "helpers.assist"),
        (40, 42, "function", "main"),
    ]
    _check_text(chunks, RUST)
    assert chunks[0].imports == (
        "crate::config::Config",
        "crate::config::loader::load",
        "crate::config",
        "super::util",
        "std::io",
        "self::parser",
    )
    # Macros are not calls; turbofish and paths reduce to the bare name.
    assert _by_symbol(chunks, "Token.new").calls == ("new", "len", "parse")
    assert _by_symbol(chunks, "Visit.done").calls == ("check",)
    assert _by_symbol(chunks, "helpers.assist").calls == ("run",)
    assert _by_symbol(chunks, "main").calls == ("new",)


JAVA = _src(
    """
    package com.acme.app;

    import com.acme.store.Repo;
    import static com.acme.util.Checks.require;
    import java.util.*;

    /** The service. */
    @Service
    public class UserService extends Base {
        private final Repo repo;

        public UserService(Repo repo) {
            super();
            this.repo = repo;
        }

        @Override
        public User find(String id) {
            require(id);
            return repo.load(id).orElse(new User(id));
        }

        static class Cache {
            void clear() {
                map.clear();
            }
        }
    }

    interface Finder {
        User find(String id);
    }
    """
)


IMPLS = _src(
    """
    impl fmt::Display for Number {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            self.n.fmt(f)
        }
    }

    impl<T> Reader<T>
    where
        T: Read,
    {
        pub fn get(&self) -> &T {
            &self.inner
        }
    }

    impl Number {
        const ZERO: u8 = 0;

        pub fn is_zero(&self) -> bool {
            self.n == 0
        }
    }
    """
)


def test_rust_bare_impl_headers_open_their_first_method() -> None:
    """A one-line ``impl Number {`` says nothing of its own and, as a chunk, outranked the
    methods for any question naming ``Number``: it opens the first method's chunk, where
    ``impl fmt::Display for Number`` still says which trait it implements. A header with a
    ``where`` clause, or members before the first method, stays a chunk."""
    chunks = chunk_file("src/number.rs", IMPLS, _cfg())
    assert _shape(chunks) == [
        (1, 4, "method", "Number.fmt"),
        (7, 10, "impl", "Reader"),
        (11, 13, "method", "Reader.get"),
        (16, 17, "impl", "Number"),
        (19, 21, "method", "Number.is_zero"),
    ]
    _check_text(chunks, IMPLS)
    assert _by_symbol(chunks, "Number.fmt").text.startswith("impl fmt::Display for Number {")


def test_java() -> None:
    chunks = chunk_file("src/main/java/com/acme/app/UserService.java", JAVA, _cfg())
    assert _shape(chunks) == [
        (1, 5, "module", ""),
        (7, 10, "class", "UserService"),
        (12, 15, "method", "UserService.UserService"),
        (17, 21, "method", "UserService.find"),
        (23, 23, "class", "UserService.Cache"),
        (24, 26, "method", "UserService.Cache.clear"),
        (30, 32, "interface", "Finder"),
    ]
    _check_text(chunks, JAVA)
    assert chunks[0].imports == (
        "com.acme.store.Repo",
        "com.acme.util.Checks.require",
        "java.util.*",
    )
    assert _by_symbol(chunks, "UserService.find").calls == ("require", "load", "orElse", "User")
    assert _by_symbol(chunks, "UserService.UserService").calls == ()
    assert _by_symbol(chunks, "UserService.Cache.clear").calls == ("clear",)


def test_markdown_windows_use_headings() -> None:
    text = "# Guide\n\nIntro.\n\n## Install\n" + "".join(f"step {i}\n" for i in range(30))
    chunks = chunk_file("docs/guide.md", text, _cfg(window_lines=20, window_overlap=5))
    assert detect_language("docs/guide.md") is None
    assert [(c.start, c.end, c.kind, c.symbol) for c in chunks] == [
        (1, 20, "window", "Guide"),
        (16, 35, "window", "Install"),
    ]
    assert {c.language for c in chunks} == {"text"}
    assert all(c.imports == () and c.calls == () for c in chunks)
    _check_text(chunks, text)


def test_plain_text_windows_skip_blank_regions() -> None:
    text = "alpha\n" + "\n" * 30 + "omega\n"
    chunks = chunk_file("notes.txt", text, _cfg(window_lines=10, window_overlap=0))
    assert [(c.start, c.end, c.text) for c in chunks] == [(1, 1, "alpha"), (32, 32, "omega")]


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("bad.py", bytes(range(256)).decode("utf-8", errors="replace") * 20),
        ("bad.rs", (b"\xff\xfe\x00fn \x80{{{" * 300).decode("utf-8", errors="replace")),
        ("empty.py", ""),
        ("blank.go", "  \n\t\n\n"),
        ("giant.js", "var a = " + "1 + " * 12_500 + "1;"),
        ("giant.py", "x = '" + "y" * 50_000 + "'"),
        ("crlf.java", "class A {\r\n  void m() {\r\n    n();\r\n  }\r\n}\r\n"),
        ("comments.ts", "// only\n// comments\n/* here */\n"),
        ("ff.py", "def a():\n    pass\n\x0c\ndef b():\n    c()\n"),
        ("surrogate.py", "def a():\n    return '\udcff'\n"),
        ("nul.java", "class A {\x00 void m() {} }"),
        ("data.json", '{"a": 1}'),
    ],
)
def test_odd_input_never_raises_and_lines_match(path: str, text: str) -> None:
    chunks = chunk_file(path, text, _cfg())
    if not text.strip():
        assert chunks == []
        return
    assert chunks
    _check_text(chunks, text)
    n = len(text.splitlines())
    assert all(1 <= c.start <= c.end <= n for c in chunks)


def test_garbage_code_falls_back_to_windows() -> None:
    text = bytes(range(256)).decode("utf-8", errors="replace") * 20
    chunks = chunk_file("bad.py", text, _cfg())
    assert {c.kind for c in chunks} == {"window"}


def test_crlf_and_form_feed_line_numbers() -> None:
    crlf = chunk_file("c.java", "class A {\r\n  void m() {\r\n    n();\r\n  }\r\n}\r\n", _cfg())
    assert _shape(crlf) == [(1, 1, "class", "A"), (2, 4, "method", "A.m")]
    assert crlf[1].text == "  void m() {\n    n();\n  }"
    ff = chunk_file("f.py", "def a():\n    pass\n\x0c\ndef b():\n    c()\n", _cfg())
    assert _shape(ff) == [(1, 2, "function", "a"), (5, 6, "function", "b")]


def test_hash_is_content_addressed_and_path_dependent() -> None:
    text = "def f():\n    return 1\n"
    a = chunk_file("a/x.py", text, _cfg())[0]
    again = chunk_file("a/x.py", "\n\n" + text, _cfg())[0]
    other = chunk_file("b/x.py", text, _cfg())[0]
    expected = hashlib.sha256(b"a/x.py\nf\nfunction\ndef f():\n    return 1").hexdigest()
    assert a.hash == expected
    assert again.hash == a.hash and (again.start, again.end) == (3, 4)
    assert other.hash != a.hash


def test_chunks_carry_file_flags() -> None:
    chunks = chunk_file("tests/test_x.py", "def test_a():\n    assert f()\n", _cfg())
    assert chunks[0].is_test and not chunks[0].is_generated and not chunks[0].is_vendor
    gen = chunk_file(
        "api/client.go", "// Code generated by protoc. DO NOT EDIT.\npackage api\n", _cfg()
    )
    assert gen[0].is_generated


@pytest.mark.parametrize(
    ("path", "text", "flags"),
    [
        ("src/app.py", "x = 1\n", (False, False, False)),
        ("tests/unit/helpers.py", "", (True, False, False)),
        ("pkg/test_app.py", "", (True, False, False)),
        ("pkg/app_test.py", "", (True, False, False)),
        ("cmd/main_test.go", "", (True, False, False)),
        ("web/__tests__/a.js", "", (True, False, False)),
        ("web/button.test.tsx", "", (True, False, False)),
        ("web/button.spec.ts", "", (True, False, False)),
        ("spec/models/user_spec.rb", "", (True, False, False)),
        ("src/test/java/com/x/FooTest.java", "", (True, False, False)),
        ("src/main/java/com/x/FooTest.java", "", (True, False, False)),
        ("conftest.py", "", (True, False, False)),
        ("docs/spec.md", "", (False, False, False)),
        ("src/contest.py", "", (False, False, False)),
        ("src/latest_version.py", "", (False, False, False)),
        ("gen/api.go", "// Code generated by x. DO NOT EDIT.\n", (False, True, False)),
        ("gen/api.go", "// Code generated by x.\n", (False, False, False)),
        ("lib/x.js", "/* @generated */\n", (False, True, False)),
        ("lib/x.py", "# Auto-generated file\n", (False, True, False)),
        ("lib/x.py", "\n\n\n\n\n\n# autogenerated on line 7\n", (False, False, False)),
        ("static/app.min.js", "", (False, True, False)),
        ("static/app.min.css", "", (False, True, False)),
        ("proto/user_pb2.py", "", (False, True, False)),
        ("api/user.pb.go", "", (False, True, False)),
        ("src/schema.generated.ts", "", (False, True, False)),
        ("lib/model.g.dart", "", (False, True, False)),
        ("node_modules/react/index.js", "", (False, False, True)),
        ("vendor/github.com/x/y.go", "", (False, False, True)),
        ("third_party/lib/a.c", "", (False, False, True)),
        ("third-party/lib/a.c", "", (False, False, True)),
        (".venv/lib/site-packages/x.py", "", (False, False, True)),
        ("web/bower_components/x.js", "", (False, False, True)),
        ("node_modules/pkg/tests/x.test.js", "", (True, False, True)),
    ],
)
def test_file_flags(path: str, text: str, flags: tuple[bool, bool, bool]) -> None:
    assert file_flags(path, text) == flags


def test_detect_language() -> None:
    assert [
        detect_language(p)
        for p in ("a.py", "a.pyi", "a.mjs", "a.jsx", "a.ts", "a.tsx", "a.go", "a.rs", "A.java")
    ] == [
        "python",
        "python",
        "javascript",
        "javascript",
        "typescript",
        "tsx",
        "go",
        "rust",
        "java",
    ]
    assert detect_language("README.md") is None
    assert detect_language("Makefile") is None


SECTIONS_JAVA = _src(
    """
    package org.example;

    public class ArrayUtils {
        public static int[] nullToEmpty(final int[] array) {
            return array == null ? new int[0] : array;
        }

        // Primitive/Object array converters
        // ----------------------------------------------------------------------

        /**
         * Converts an array of object Floats to primitives.
         */
        public static float[] toPrimitive(final Float[] array) {
            return null;
        }
    }
    """
)

SECTIONS_RUBY = _src(
    """
    # frozen_string_literal: true

    module Rack
      # Sinatra delegation mixin.
      module Delegator # :nodoc:
        def self.delegate(*methods)
          methods
        end
      end
    end
    """
)


def test_a_section_heading_opens_what_it_heads() -> None:
    """A comment alone between two definitions (``// Primitive/Object array converters`` and
    its rule of dashes, across a blank line; a file's ``# frozen_string_literal: true``) was a
    chunk of a line or two that matched questions by its words and pointed at nothing: it
    opens the chunk of the definition below it. A comment that ends a line of code (``module
    Delegator # :nodoc:``) stays with that line, the module's header, instead of pulling the
    first method's chunk up over it."""
    java = _shape(chunk_file("src/ArrayUtils.java", SECTIONS_JAVA, _cfg()))
    assert java == [
        (1, 1, "module", ""),
        (3, 3, "class", "ArrayUtils"),
        (4, 6, "method", "ArrayUtils.nullToEmpty"),
        (8, 16, "method", "ArrayUtils.toPrimitive"),
    ]
    ruby = _shape(chunk_file("lib/rack/delegator.rb", SECTIONS_RUBY, _cfg()))
    assert ruby == [
        (1, 3, "module", "Rack"),
        (4, 5, "module", "Rack.Delegator"),
        (6, 8, "method", "Rack.Delegator.delegate"),
    ]


WRAPPED = _src(
    """
    import * as React from 'react';
    const app = express();
    const Button = React.forwardRef(({ variant, ...props }, ref) => {
      const prefix = useBootstrapPrefix(variant, 'btn');
      return <button ref={ref} className={prefix} {...props} />;
    });
    export const Card = memo(forwardRef(function Card(props, ref) {
      return null;
    }));
    Button.displayName = 'Button';
    """
)


def test_a_name_bound_to_a_wrapped_function_is_a_definition() -> None:
    """React's components are written ``const Button = React.forwardRef((props, ref) => …)``
    and ``memo(forwardRef(function Card …))``: a call that takes a function literal, directly
    or through another such call, defines the name it is bound to (react-bootstrap's ``Button``
    was a file-long chunk with no symbol). A call with no function in it (``express()``) is
    module code as before."""
    assert _shape(chunk_file("src/Button.jsx", WRAPPED, _cfg())) == [
        (1, 2, "module", ""),
        (3, 6, "function", "Button"),
        (7, 9, "function", "Card"),
        (10, 10, "module", ""),
    ]
