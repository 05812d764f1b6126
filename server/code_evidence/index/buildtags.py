"""Go build constraints: is a file left out of a default build?

Go keeps alternatives of one file side by side and picks one with a build constraint:
``binding.go`` (``//go:build !nomsgpack``) and its near copy ``binding_nomsgpack.go``
(``//go:build nomsgpack``), a shim for old toolchains (``//go:build !go1.18``), a generator
program (``//go:build ignore``), an opt-in JSON backend (``//go:build jsoniter``). The file a
default build compiles is the one a question about the package means; the others repeat it
or stand in for it. They are real source and stay searchable: ranking only puts them below
the file they vary (``generated.py`` records them, ``features.py`` applies the factor).

A default build here: every platform (``linux``, ``windows``, ... and architectures count as
true, since a platform's own file is no lesser source), every ``goN.M`` release true (a
current toolchain), ``cgo`` and ``gc`` true, and every other tag (custom tags, ``ignore``,
``gccgo``) false. Both constraint syntaxes are read: ``//go:build`` and, where that is
absent, the older ``// +build`` lines. Only the header before ``package`` counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_GOOS = (
    "aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd openbsd plan9 "
    "solaris wasip1 windows zos unix"
)
_GOARCH = (
    "386 amd64 amd64p32 arm armbe arm64 arm64be loong64 mips mipsle mips64 mips64le mips64p32 "
    "mips64p32le ppc ppc64 ppc64le riscv riscv64 s390 s390x sparc sparc64 wasm"
)
_ON = frozenset(f"{_GOOS} {_GOARCH} cgo gc".split())
_RELEASE = re.compile(r"go1\.\d+$")
_TOKEN = re.compile(r"\s*(\(|\)|!|&&|\|\||[\w.]+)")
HEADER_LINES = 40  # a constraint sits above the package clause, after at most a licence


def tag_on(tag: str) -> bool:
    """The tag's value in a default build."""
    return tag in _ON or _RELEASE.match(tag) is not None


class _Parser:
    """``expr := and ('||' and)*; and := unary ('&&' unary)*; unary := '!' unary | '(' expr ')'
    | tag``: the grammar of ``//go:build`` lines."""

    def __init__(self, text: str) -> None:
        self.tokens: list[str] = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise ValueError(text)
            self.tokens.append(m.group(1))
            pos = m.end()
        self.i = 0

    def _next(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def parse(self) -> bool:
        value = self._or()
        if self._next() is not None:
            raise ValueError("trailing tokens")
        return value

    def _or(self) -> bool:
        return any(self._operands("||", self._and))

    def _and(self) -> bool:
        return all(self._operands("&&", self._unary))

    def _operands(self, op: str, operand: Callable[[], bool]) -> list[bool]:
        """Every operand of a chain joined by ``op``, each parsed (so all tokens are read)."""
        values = [operand()]
        while self._next() == op:
            self.i += 1
            values.append(operand())
        return values

    def _unary(self) -> bool:
        tok = self._next()
        if tok is None:
            raise ValueError("unexpected end")
        self.i += 1
        if tok == "!":
            return not self._unary()
        if tok == "(":
            value = self._or()
            if self._next() != ")":
                raise ValueError("unclosed parenthesis")
            self.i += 1
            return value
        if tok in (")", "&&", "||"):
            raise ValueError(tok)
        return tag_on(tok)


def _term(term: str) -> bool:
    return not tag_on(term[1:]) if term.startswith("!") else tag_on(term)


def _plus_build(lines: list[str]) -> bool:
    """``// +build a,b !c`` lines: options separated by spaces are OR'd, terms joined by commas
    AND'd, and the lines AND'd together."""
    for line in lines:
        options = line.split()
        if not any(all(_term(t) for t in opt.split(",") if t) for opt in options):
            return False
    return True


def off_by_default(text: str) -> bool:
    """The Go file's constraint leaves it out of a default build (no constraint, or one that
    cannot be read: False, the file is a plain member of its package)."""
    plus: list[str] = []
    for line in text.splitlines()[:HEADER_LINES]:
        stripped = line.strip()
        if stripped.startswith("package ") or stripped == "package":
            break
        if stripped.startswith("//go:build "):
            try:
                return not _Parser(stripped[len("//go:build ") :]).parse()
            except ValueError:
                return False
        if stripped.startswith("// +build "):
            plus.append(stripped[len("// +build ") :])
    return bool(plus) and not _plus_build(plus)
