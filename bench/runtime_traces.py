#!/usr/bin/env python3
"""Real failures in Ruby, PHP, Java, JavaScript, Go, Rust, C#, C and C++, pasted whole or as
their error line, asked of held-out packages.

The dev set's traces are Python's (flask's and click's, ``failures/``). This set runs
``runtime_traces/snippets.toml``: small programs that make packages of ``doc_questions.py``
raise, each as its language runs here:

- Ruby (rack, thor, addressable, mustermann, sinatra) and PHP (psr7, monolog, symfony/console,
  commonmark, twig): Debian's interpreters and Debian's builds of the same versions
  (``apt-get install ruby php-cli ruby-rack ruby-thor ruby-addressable ruby-mustermann
  ruby-sinatra php-guzzlehttp-psr7 php-monolog php-twig php-league-commonmark
  php-symfony-console``; bookworm's, the packages' .deb files were unpacked from). Their frames
  name the installed paths (``/usr/share/rubygems-integration/all/gems/rack-2.2.22/lib/rack/
  utils.rb``, ``/usr/share/php/Twig/…``): another machine's paths for the workspace's files, as
  a user's are.
- Java (commons-lang3, commons-io, jsoup): the package's own ``src/main/java`` compiled by
  ``javac`` (jsoup needs ``libjsr305-java``), the program run as ``java Main.java``; frames
  name a class and a bare file name.
- JavaScript (commander, ws, express, koa): ``node -e`` beside the same versions installed
  from npm (``node_modules/<name>/…``).
- Go (chi, mux, logrus, cobra, pflag): ``go run`` in GOPATH mode against Debian's sources of
  the same versions (``apt-get install golang-go golang-github-go-chi-chi-dev
  golang-github-gorilla-mux-dev golang-github-sirupsen-logrus-dev golang-github-spf13-cobra-dev
  golang-github-spf13-pflag-dev``: ``/usr/share/gocode``).
- Rust (serde_json, regex): one binary, built offline by cargo against Debian's crate sources
  (``apt-get install librust-serde-json-dev librust-regex-dev``: ``/usr/share/cargo/registry``
  replacing crates.io), run with ``RUST_BACKTRACE=1``.
- C# (Newtonsoft.Json): Mono (``apt-get install mono-mcs mono-runtime``, with the framework
  assemblies it references) compiles the package's own ``Src/Newtonsoft.Json`` with debug
  information and the program against it, run with ``mono --debug``: Mono's trace format.
- C (cJSON) and C++ (tinyxml2; nlohmann/json, cxxopts, toml++ and CLI11, header-only): each
  program built by gcc/g++ 12 with ``-g -O0``, against Debian's headers of the same versions
  (``apt-get install nlohmann-json3-dev libcxxopts-dev libtomlplusplus-dev libcli11-dev``; the
  workspace holds them under ``include/``, upstream's layout) or with the package's own sources
  compiled in from a copy (Debian's source packages: ``apt-get source cjson tinyxml2``). Run
  under ``gdb -batch -ex run -ex bt`` (kind ``trace``: what gdb printed, its backtrace; kind
  ``message``: an uncaught exception's ``terminate called …`` and ``what():`` lines), and built
  again with AddressSanitizer and UndefinedBehaviorSanitizer (kind ``sanitizer``: their report,
  its own gold: a sanitizer often catches the error before the crash gdb sees).

A program whose failure does not pass through the package's own files, or whose loaded file
differs from the workspace's, is reported and left out.

Gold: the innermost frame in the package's files (the shared rule for traces: where the fix
goes), its file and line. Go returns most of its errors rather than panicking: a Go snippet
with a ``gold`` key (``flag.go:478``) prints the error it got, as programs do (``fmt.Println(err)``,
``log.Fatal(err)``, cobra's ``Error: …`` and usage), and is one case, ``returned``, asked as
printed; its gold is labelled by hand at the statement whose literal starts the message (the
outermost wrap of a chain such as ``invalid argument "abc" for "-n, --count" flag: strconv.
ParseInt: …``), checked against the output (:func:`returned_case`). Two cases a failure, more
where the language's test runners run here: ``trace``, everything the interpreter printed,
and ``message``, its error line alone without the place (Ruby's ``path:line:in 'm': `` before
it, PHP's `` in path:line`` after it; Java's ``Exception in thread`` line; Node's first line of
the error's text; Go's ``panic:`` line; a Rust panic's message, the line under its place; the
line under Mono's ``Unhandled Exception:``), as a log or a bug report quotes it; and
``test-report``, one per runner, the same snippet as a test, what the runner printed:
minitest and RSpec (Ruby), ``go test``, ``cargo test``, node:test with the TAP reporter
(Node 20's when the output is not a terminal: a CI log), Jest and Vitest, JUnit 5's console
launcher (Java), PHPUnit, GoogleTest and Catch2 (C++; :data:`RUNNERS` says where each comes
from), kept when it names the same innermost frame (GoogleTest and Catch2 name no place: kept
when they print the exception's message; Catch2 wraps it at 80 columns). C and C++ are asked
as gdb's backtrace (``trace``), the exception's two lines (``message``) and the sanitizers'
report (``sanitizer``; see :func:`native_cases`). Reported per language and kind: MRR@10 at file
level, line@1 / line@10 (a result among the first one / ten holds the gold line) and the two
refusal numbers; ``depth`` deep, no time limit.

  python bench/runtime_traces.py --packages DIR [--index-root DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import CACHE_ROOT, log
from held_out import place_rows, place_table, write_report

HERE = Path(__file__).resolve().parent
SNIPPETS = HERE / "runtime_traces" / "snippets.toml"
RUBY_GEMS = Path("/usr/share/rubygems-integration/all/gems")
PHP_ROOT = Path("/usr/share/php")
# Where Debian installs each PHP package's files (a Ruby gem's folder is its name-version).
PHP_DIRS = {
    "psr7-2.4.5": "GuzzleHttp/Psr7",
    "monolog-2.9.1": "Monolog",
    "symfony-console-5.4.53": "Symfony/Component/Console",
    "commonmark-2.3.9": "League/CommonMark",
    "twig-3.5.1": "Twig",
}
JAVA_CLASSPATH = {"jsoup-1.15.3": "/usr/share/java/jsr305.jar"}  # its @Nullable
GOPATH = Path("/usr/share/gocode")
GO_DIRS = {
    "chi-5.0.7": "github.com/go-chi/chi",
    "mux-1.8.0": "github.com/gorilla/mux",
    "logrus-1.9.0": "github.com/sirupsen/logrus",
    "cobra-1.6.1": "github.com/spf13/cobra",
    "pflag-1.0.6": "github.com/spf13/pflag",
}
CARGO_REGISTRY = Path("/usr/share/cargo/registry")
# The JavaScript test runners, from npm: Jest, and Vitest's last release for Node 20.
NPM_RUNNERS = {"jest": "jest@30.5.2", "vitest": "vitest@4.1.12"}
LANGUAGES = {
    "ruby": "Ruby",
    "php": "PHP",
    "java": "Java",
    "node": "JavaScript",
    "go": "Go",
    "rust": "Rust",
    "csharp": "C#",
    "c": "C",
    "cpp": "C++",
}
# The test runners that run here, per language (the first the one the ``test-report`` kind
# used alone before): minitest and RSpec (Debian's ruby-rspec 3.12), ``go test``, ``cargo
# test``, node:test
# with the TAP reporter, Jest and Vitest (:data:`NPM_RUNNERS`), JUnit 5's console launcher
# (Debian's junit5 1.9), PHPUnit (Debian's phpunit 9.6), GoogleTest 1.12 and Catch2 2.13
# (Debian's libgtest-dev and catch2; they report an uncaught exception's message, no place).
RUNNERS = {
    "ruby": ("minitest", "rspec"),
    "go": ("go test",),
    "rust": ("cargo test",),
    "node": ("node:test", "jest", "vitest"),
    "java": ("junit",),
    "php": ("phpunit",),
    "cpp": ("googletest", "catch2"),
}
JUNIT_CONSOLE = "/usr/share/java/junit-platform-console-standalone.jar"
JUNIT = tuple(
    f"/usr/share/java/{jar}.jar" for jar in ("junit-jupiter-api", "apiguardian-api", "opentest4j")
)
_RUBY_FRAME = re.compile(r"^\s*(?:from )?(\S+\.rb):(\d+):in ", re.M)
_RUBY_PLACE = re.compile(r"^\S+\.rb:\d+:in [`'][^'\n]*': ")
_PHP_FRAME = re.compile(r"(?:^#\d+ (\S+\.php)\((\d+)\)| in (\S+\.php):(\d+)$)", re.M)
_PHP_PLACE = re.compile(r" in \S+\.php:\d+$")
_JAVA_FRAME = re.compile(r"^\s*at ([\w$.]+)\.[\w$<>]+\(([\w$]+\.java):(\d+)\)", re.M)
_NODE_FRAME = re.compile(r"^\s*at (?:.*? \()?(/\S+?\.js):(\d+):\d+\)?$", re.M)
_GO_FRAME = re.compile(r"^\t(/\S+\.go):(\d+)", re.M)
_RUST_FRAME = re.compile(r"(?:panicked at |^\s*at )(/\S+\.rs):(\d+):\d+", re.M)
# C and C++: gdb's backtrace and a sanitizer's frames (absolute paths: the program is built
# from them), and the C++ runtime's two lines about an uncaught exception.
_GDB_FRAME = re.compile(r"^#\d+\s+.* at (/\S+):(\d+)$", re.M)
_SANITIZER_FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ in .* (/\S+?):(\d+)(?::\d+)?$", re.M)
_TERMINATE = re.compile(r"^terminate called after throwing .*\n\s*what\(\):.*$", re.M)
# The C and C++ packages whose own sources are compiled into the program (the others are
# header-only: Debian's headers of the same version, under /usr/include).
COMPILED = {"cJSON-1.7.15": ("cJSON.c",), "tinyxml2-9.0.0": ("tinyxml2.cpp",)}
SANITIZERS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=undefined")
_MONO_FRAME = re.compile(r"^\s*at .*? in (/\S+\.cs):(\d+)\s*$", re.M)
# Newtonsoft.Json's own build settings, as mcs takes them (its .csproj: TRACE; the framework
# assemblies it references).
_MCS_LIBRARY = [
    "-target:library",
    "-debug",
    "-nowarn:1591,618,612,649,169,414,219,168,67,1570,1572,1573,1574,1584,1580,1581,1635",
    "-define:TRACE",
    *(f"-r:System.{r}" for r in ("Runtime.Serialization", "Xml", "Xml.Linq", "Data", "Numerics")),
    "-r:System.Core",
]


@dataclass
class Case:
    project: str
    language: str
    kind: str  # trace | message | returned | sanitizer | test-report
    name: str
    query: str
    path: str  # gold: the innermost frame in the package's files (``returned``: the label)
    line: int
    runner: str = ""  # a test-report's test runner (:data:`RUNNERS`)


@dataclass
class Runtime:
    """How one language's snippets run here, and where its package's files are."""

    packages: Path
    work: Path

    def command(
        self, language: str, project: str, name: str, code: str
    ) -> tuple[list[str], Path, dict[str, str]]:
        """The command that runs one snippet, its folder and its environment's additions."""
        if language == "ruby":
            return ["ruby", "-e", code], self.work, {}
        if language == "php":
            return ["php", "-r", code], self.work, {}
        if language == "java":
            folder = self.work / "java" / project
            folder.mkdir(parents=True, exist_ok=True)
            main = folder / "Main.java"
            main.write_text(
                "public class Main {\n  public static void main(String[] args) throws Exception "
                f"{{\n    {code}\n  }}\n}}\n",
                encoding="utf-8",
            )
            cp = ":".join(filter(None, [str(self._javac(project)), JAVA_CLASSPATH.get(project)]))
            return ["java", "-cp", cp, str(main)], folder, {}
        if language == "go":  # GOPATH mode: the imports resolve to Debian's sources
            folder = self.work / "go" / project / name
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "main.go").write_text(code.lstrip(), encoding="utf-8")
            return ["go", "run", "main.go"], folder, self._go_env()
        if language == "rust":
            return [str(self._cargo()), name], self.work, {"RUST_BACKTRACE": "1"}
        if language == "csharp":
            folder = self.work / "csharp" / project / name
            folder.mkdir(parents=True, exist_ok=True)
            dll = self._mcs(project)
            (folder / "Main.cs").write_text(
                f"class P {{\n  static void Main() {{\n    {code}\n  }}\n}}\n", encoding="utf-8"
            )
            shutil.copy(dll, folder / dll.name)
            shutil.copy(dll.with_suffix(".dll.mdb"), folder / (dll.name + ".mdb"))
            build = ["mcs", "-debug", f"-r:{dll.name}", "-out:main.exe", "Main.cs"]
            subprocess.run(build, cwd=folder, check=True, capture_output=True)
            return ["mono", "--debug", "main.exe"], folder, {}
        return ["node", "-e", code], self._npm(), {}

    def test_command(
        self, runner: str, project: str, name: str, code: str
    ) -> tuple[list[str], Path, dict[str, str]]:
        """The same snippet as a test that ``runner`` (one of :data:`RUNNERS`) runs."""
        # The test's own folder, for the runners that read a test file from one.
        folder = self.work / "tests" / runner.replace(" ", "-") / project / name
        if runner in ("rspec", "go test", "junit", "phpunit"):
            folder.mkdir(parents=True, exist_ok=True)
        if runner == "minitest":
            test = (
                'require "minitest/autorun"\nclass AppTest < Minitest::Test\n  def test_app\n'
                f"    {code}\n  end\nend\n"
            )
            return ["ruby", "-e", test], self.work, {}
        if runner == "rspec":
            (folder / "app_spec.rb").write_text(
                f'RSpec.describe "app" do\n  it "works" do\n    {code}\n  end\nend\n',
                encoding="utf-8",
            )
            return ["rspec", "app_spec.rb"], folder, {}
        if runner == "cargo test":  # Rust's default: no backtrace
            folder = self._cargo().parents[2]
            test = ["cargo", "test", "-q", f"tests::{_rust_test(name)}", "--", "--exact"]
            return test, folder, {"RUST_BACKTRACE": "0"}
        if runner == "go test":
            test = code.lstrip().replace("package main\n", 'package main\n\nimport "testing"\n', 1)
            test = test.replace("func main() {", "func TestApp(t *testing.T) {", 1)
            (folder / "main_test.go").write_text(test, encoding="utf-8")
            return ["go", "test", "."], folder, self._go_env()
        if runner == "junit":
            (folder / "AppTest.java").write_text(
                "import org.junit.jupiter.api.Test;\npublic class AppTest {\n  @Test\n"
                f"  void app() throws Exception {{\n    {code}\n  }}\n}}\n",
                encoding="utf-8",
            )
            extra = JAVA_CLASSPATH.get(project)
            cp = ":".join([str(self._javac(project)), *JUNIT, *([extra] if extra else [])])
            subprocess.run(
                ["javac", "-d", "out", "-cp", cp, "AppTest.java"],
                cwd=folder,
                check=True,
                capture_output=True,
            )
            launch = ["java", "-jar", JUNIT_CONSOLE, "-cp", f"out:{cp}"]
            flags = ["--select-class", "AppTest", "--disable-banner", "--disable-ansi-colors"]
            return [*launch, *flags], folder, {}
        if runner == "phpunit":
            (folder / "AppTest.php").write_text(
                "<?php\nuse PHPUnit\\Framework\\TestCase;\nfinal class AppTest extends TestCase {\n"
                f"  public function testApp(): void {{\n    {code}\n  }}\n}}\n",
                encoding="utf-8",
            )
            return ["phpunit", "AppTest.php"], folder, {}
        npm = self._npm()
        if runner == "jest":
            (npm / "app.test.js").write_text(f'test("app", () => {{\n  {code}\n}});\n', "utf-8")
            return [str(npm / "node_modules/.bin/jest"), "--ci", "app.test.js"], npm, {}
        if runner == "vitest":  # an ES module: the snippet's require() made for it
            (npm / "app.test.mjs").write_text(
                'import { test } from "vitest";\nimport { createRequire } from "node:module";\n'
                "const require = createRequire(import.meta.url);\n"
                f'test("app", () => {{\n  {code}\n}});\n',
                encoding="utf-8",
            )
            vitest = [str(npm / "node_modules/.bin/vitest"), "run", "app.test.mjs"]
            return vitest, npm, {"CI": "true", "NO_COLOR": "1"}
        test = npm / "app.test.js"
        test.write_text(
            f'const test = require("node:test");\ntest("app", () => {{\n  {code}\n}});\n',
            encoding="utf-8",
        )
        return ["node", "--test", "--test-reporter=tap", str(test)], npm, {}

    def _go_env(self) -> dict[str, str]:
        return {"GO111MODULE": "off", "GOPATH": str(GOPATH), "GOCACHE": str(self.work / "gocache")}

    def installed(self, language: str, project: str) -> Path:
        """The folder the running program loads the package's files from."""
        if language == "ruby":
            return RUBY_GEMS / project
        if language == "php":
            return PHP_ROOT / PHP_DIRS[project]
        if language == "java":
            return self.packages / project  # frames name classes; see innermost()
        if language == "go":
            return GOPATH / "src" / GO_DIRS[project]
        if language == "rust":
            return CARGO_REGISTRY / project
        if language == "csharp":  # built from the workspace's own files: their real path
            return (self.packages / project).resolve()
        if language in ("c", "cpp"):  # a copy compiled in, or Debian's headers
            return self.work / "native" / "src" / project if project in COMPILED else Path("/usr")
        return self._npm() / "node_modules" / project.rsplit("-", 1)[0]

    def native(self, language: str, project: str, name: str, code: str, variant: str = "") -> Path:
        """A C or C++ snippet built with debug information: as it is (``variant`` ""), with the
        sanitizers (``"sanitized"``), or as a test GoogleTest or Catch2 runs (a runner of
        :data:`RUNNERS`: the program's ``main`` becomes a function the test calls). The
        package's own sources are compiled in from a copy (another machine's path, as a
        user's). Built again when its program changes."""
        folder = self.work / "native" / project / name
        folder.mkdir(parents=True, exist_ok=True)
        program, libraries = code.lstrip(), []
        if variant == "googletest":
            program = program.replace("int main() {", "static int app() {", 1)
            program = f"#include <gtest/gtest.h>\n{program}\nTEST(App, Works) {{ app(); }}\n"
            libraries = ["-lgtest", "-lgtest_main", "-pthread"]
        elif variant == "catch2":
            program = program.replace("int main() {", "static int app() {", 1)
            program = (
                f"#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>\n{program}\n"
                'TEST_CASE("app works") { app(); }\n'
            )
        tested = variant not in ("", "sanitized")
        source = folder / f"{variant if tested else 'main'}.{'c' if language == 'c' else 'cpp'}"
        if not source.exists() or source.read_text(encoding="utf-8") != program:
            source.write_text(program, encoding="utf-8")
        binary = folder / (variant if tested else "main-sanitized" if variant else "main")
        if binary.exists() and binary.stat().st_mtime >= source.stat().st_mtime:
            return binary
        sources: list[str] = []
        if project in COMPILED:
            copy = self.installed(language, project)
            if not copy.exists():
                shutil.copytree(self.packages / project, copy)
            sources = ["-I", str(copy), *(str(copy / f) for f in COMPILED[project])]
        compiler = "gcc" if language == "c" else "g++"
        flags = ["-g", "-O0", "-fno-omit-frame-pointer"]
        flags += SANITIZERS if variant == "sanitized" else ()
        build = [compiler, *flags, str(source), *sources, "-o", str(binary), *libraries]
        subprocess.run(build, check=True, capture_output=True)
        return binary

    def _javac(self, project: str) -> Path:
        """The package's own src/main/java, compiled once (javac keeps line numbers)."""
        out = self.work / "classes" / project
        if not (out / ".done").exists():
            sources = sorted(
                str(p) for p in (self.packages / project / "src/main/java").rglob("*.java")
            )
            cp = JAVA_CLASSPATH.get(project)
            cmd = ["javac", "-nowarn", "-encoding", "UTF-8", "-d", str(out)]
            subprocess.run(
                [*cmd, *(["-cp", cp] if cp else []), *sources], check=True, capture_output=True
            )
            (out / ".done").touch()
        return out

    def _mcs(self, project: str) -> Path:
        """The package's library, compiled once by Mono's mcs from its own sources with debug
        information (frames then name the source files and lines)."""
        out = self.work / "csharp" / "lib" / project / "Newtonsoft.Json.dll"
        if not out.exists():
            out.parent.mkdir(parents=True, exist_ok=True)
            src = (self.packages / project / "Src" / "Newtonsoft.Json").resolve()
            cmd = ["mcs", *_MCS_LIBRARY, f"-out:{out}", "-recurse:*.cs"]
            subprocess.run(cmd, cwd=src, check=True, capture_output=True)
        return out

    def _cargo(self) -> Path:
        """One binary whose first argument picks a Rust snippet, and a test per snippet
        (``tests::key_of_number``), built once (again when the snippets change), offline,
        against Debian's crate sources (a ``directory`` source replacing crates.io)."""
        folder = self.work / "rust"
        binary = folder / "target" / "debug" / "snippets"
        snippets = _snippets().get("rust", [])
        arms = "".join(f'        "{s["name"]}" => {{ {s["code"]} }}\n' for s in snippets)
        tests = "".join(
            f"    #[test]\n    fn {_rust_test(s['name'])}() {{ {s['code']} }}\n" for s in snippets
        )
        source = (
            "fn main() {\n    let name = std::env::args().nth(1).unwrap_or_default();\n"
            f"    match name.as_str() {{\n{arms}        _ => {{}}\n    }}\n}}\n"
            f"\n#[cfg(test)]\nmod tests {{\n{tests}}}\n"
        )
        done = folder / ".done"
        if done.exists() and done.read_text(encoding="utf-8") == source:
            return binary
        (folder / "src").mkdir(parents=True, exist_ok=True)
        (folder / ".cargo").mkdir(exist_ok=True)
        (folder / ".cargo" / "config.toml").write_text(
            '[source.crates-io]\nreplace-with = "debian"\n[source.debian]\n'
            f'directory = "{CARGO_REGISTRY}"\n[net]\noffline = true\n',
            encoding="utf-8",
        )
        crates = sorted({s["package"] for s in snippets})
        deps = "".join(f'{c.rsplit("-", 1)[0]} = "={c.rsplit("-", 1)[1]}"\n' for c in crates)
        (folder / "Cargo.toml").write_text(
            '[package]\nname = "snippets"\nversion = "0.1.0"\nedition = "2021"\n\n'
            f"[dependencies]\n{deps}",
            encoding="utf-8",
        )
        (folder / "src" / "main.rs").write_text(source, encoding="utf-8")
        subprocess.run(["cargo", "build", "-q"], cwd=folder, check=True, capture_output=True)
        build_tests = ["cargo", "test", "-q", "--no-run"]
        subprocess.run(build_tests, cwd=folder, check=True, capture_output=True)
        done.write_text(source, encoding="utf-8")
        return binary

    def _npm(self) -> Path:
        """The npm packages of snippets.toml at doc_questions.py's versions and the test
        runners (:data:`NPM_RUNNERS`), installed once (again when the list changes)."""
        prefix = self.work / "npm"
        wanted = sorted({s["package"] for s in _snippets().get("node", [])})
        specs = [f"{p.rsplit('-', 1)[0]}@{p.rsplit('-', 1)[1]}" for p in wanted]
        specs += NPM_RUNNERS.values()
        done = prefix / ".done"
        if not done.exists() or done.read_text(encoding="utf-8") != " ".join(specs):
            prefix.mkdir(parents=True, exist_ok=True)
            install = ["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix"]
            subprocess.run([*install, str(prefix), *specs], check=True, capture_output=True)
            done.write_text(" ".join(specs), encoding="utf-8")
        return prefix


def _rust_test(name: str) -> str:
    """A Rust snippet's test function: ``key-of-number`` -> ``key_of_number``."""
    return name.replace("-", "_")


def _snippets() -> dict[str, list[dict[str, str]]]:
    return tomllib.loads(SNIPPETS.read_text(encoding="utf-8"))


def innermost(output: str, language: str, root: Path) -> tuple[str, int] | None:
    """The first frame (innermost) in the package's files, as a path relative to the package
    and a line."""
    if language == "java":  # a class's package and its file name give the source's path
        for m in _JAVA_FRAME.finditer(output):
            package = m.group(1).split("$", 1)[0].rsplit(".", 1)[0]
            rel = f"src/main/java/{package.replace('.', '/')}/{m.group(2)}"
            if (root / rel).is_file():
                return rel, int(m.group(3))
        return None
    if language == "ruby":
        frames = [(m.group(1), int(m.group(2))) for m in _RUBY_FRAME.finditer(output)]
    elif language == "php":  # the throw site on the error line, then #0 (innermost) outwards
        frames = [
            (m.group(1) or m.group(3), int(m.group(2) or m.group(4)))
            for m in _PHP_FRAME.finditer(output)
        ]
    else:
        frame_re = {"go": _GO_FRAME, "rust": _RUST_FRAME, "csharp": _MONO_FRAME}.get(
            language, _NODE_FRAME
        )
        frames = [(m.group(1), int(m.group(2))) for m in frame_re.finditer(output)]
    prefix = str(root) + "/"
    return next(((p[len(prefix) :], n) for p, n in frames if p.startswith(prefix)), None)


def native_cases(runtime: Runtime, language: str, snippet: dict[str, str]) -> list[Case]:
    """A C or C++ snippet's cases: gdb's backtrace of the program (``trace``), an uncaught
    exception's two lines (``message``) and each C++ test framework's report of the same
    exception uncaught in a test (``test-report``), and the report of the program built with
    AddressSanitizer and UndefinedBehaviorSanitizer (``sanitizer``). Each has its own gold,
    the innermost frame in the package's files of what it printed: the sanitizers often catch
    the error earlier than the crash gdb sees (the read of a freed item before its second
    ``free``), or alone (a read past a buffer that does not crash)."""
    project, name, code = snippet["package"], snippet["name"], snippet["code"]
    root = runtime.installed(language, project)
    prefix = f"{root}/"

    def first(output: str, frame_re: re.Pattern[str]) -> tuple[str, int] | None:
        for m in frame_re.finditer(output):
            rel = m.group(1)[len(prefix) :]
            if m.group(1).startswith(prefix) and (runtime.packages / project / rel).is_file():
                return rel, int(m.group(2))
        return None

    plain = runtime.native(language, project, name, code)
    debugger = ["gdb", "-q", "-batch", "-ex", "run", "-ex", "bt", str(plain)]
    gdb = subprocess.run(
        debugger, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300
    ).stdout.strip()
    sanitized = runtime.native(language, project, name, code, "sanitized")
    report = subprocess.run(
        [str(sanitized)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "UBSAN_OPTIONS": "print_stacktrace=1"},
    ).stderr.strip()
    gold = first(gdb, _GDB_FRAME)
    lang = LANGUAGES[language]
    cases: list[Case] = []
    if gold is not None:
        cases.append(Case(project, lang, "trace", name, gdb, *gold))
        thrown = _TERMINATE.search(gdb)
        if thrown:
            cases.append(Case(project, lang, "message", name, thrown.group(0), *gold))
            # The same exception, uncaught in a test: each framework reports its message.
            what = thrown.group(0).split("what():", 1)[1].strip()
            for runner in RUNNERS.get(language, ()):
                test = runtime.native(language, project, name, code, runner)
                run = subprocess.run([str(test)], capture_output=True, text=True, timeout=300)
                printed = (run.stdout + run.stderr).strip()
                if run.returncode and " ".join(what.split()) in " ".join(printed.split()):
                    cases.append(Case(project, lang, "test-report", name, printed, *gold, runner))
                else:
                    log(f"no {runner} report of the exception: {project} {name}")
    sanitizer = first(report, _SANITIZER_FRAME)
    if sanitizer is not None:
        cases.append(Case(project, lang, "sanitizer", name, report, *sanitizer))
    return cases


def error_line(output: str, language: str) -> str:
    """The error line as a log quotes it, without the place."""
    lines = output.strip().splitlines()
    if language == "ruby":
        return _RUBY_PLACE.sub("", lines[0])
    if language == "php":
        return _PHP_PLACE.sub("", lines[0])
    if language == "java":
        return next(line for line in lines if line.startswith("Exception in thread"))
    if language == "go":  # pflag prints the message, unended, before Go's own panic line
        line = next(line for line in lines if "panic: " in line)
        return line[line.index("panic: ") :]
    if language == "csharp":  # the line under Mono's "Unhandled Exception:"
        return lines[next(i for i, line in enumerate(lines) if line.startswith("Unhandled")) + 1]
    if language == "rust":  # the message, under the line that names the place
        return lines[next(i for i, line in enumerate(lines) if " panicked at " in line) + 1]
    # Node: the first line of the error's text, between the blank line under the source line
    # it points at and the first frame (a message may run over several lines).
    first_frame = next(i for i, line in enumerate(lines) if line.lstrip().startswith("at "))
    start = max((i + 1 for i in range(first_frame) if not lines[i].strip()), default=0)
    return lines[start].strip()


def test_report(runtime: Runtime, runner: str, snippet: dict[str, str], place: str) -> str | None:
    """What ``runner`` printed for the snippet run as a test, when it names the same innermost
    frame as the program did (``place``: the frame's ``file:line`` as that language's trace
    names it; Jest names it relative to its root folder)."""
    cmd, cwd, env = runtime.test_command(
        runner, snippet["package"], snippet["name"], snippet["code"]
    )
    run = subprocess.run(
        cmd, capture_output=True, text=True, timeout=300, cwd=cwd, env={**os.environ, **env}
    )
    output = (run.stdout + run.stderr).strip()
    named = place in output or (
        place.startswith(str(cwd) + "/") and place[len(str(cwd)) + 1 :] in output
    )
    return output if run.returncode and named else None


# A string literal's text up to its first placeholder (a printf verb): what a message written
# by it starts with (``returned_case`` checks a hand-labelled gold line by it).
_GO_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"|`([^`]*)`')
_VERB = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[a-zA-Z%]")


def returned_case(runtime: Runtime, snippet: dict[str, str]) -> Case | None:
    """A Go snippet that prints the error it was returned (no panic, so no frame): the case is
    what it printed, its gold the hand-labelled ``gold`` (``file.go:line``, the statement whose
    literal starts the printed message). Checked here: the program failed, the installed file
    is the workspace's, and a literal on the gold line or the two under it (a call wrapped over
    lines) has text before its first verb that the output holds."""
    project, name = snippet["package"], snippet["name"]
    cmd, cwd, env = runtime.command("go", project, name, snippet["code"])
    run = subprocess.run(
        cmd, capture_output=True, text=True, timeout=300, cwd=cwd, env={**os.environ, **env}
    )
    output = (run.stderr or run.stdout).strip()
    path, line = snippet["gold"].rsplit(":", 1)
    installed = runtime.installed("go", project) / path
    ours = runtime.packages / project / path
    if not run.returncode or not ours.is_file() or ours.read_bytes() != installed.read_bytes():
        log(f"left out, no error or another file: {project} {name}: {output[:120]!r}")
        return None
    lines = ours.read_text(encoding="utf-8").splitlines()[int(line) - 1 : int(line) + 2]
    heads = [
        _VERB.split(m.group(1) or m.group(2) or "", 1)[0]
        for m in _GO_LITERAL.finditer("\n".join(lines))
    ]
    if not any(len(h.strip()) >= 4 and h in output for h in heads):
        log(f"left out, the gold line writes no part of the output: {project} {name}")
        return None
    return Case(project, "Go", "returned", name, output, path, int(line))


def build_cases(packages: Path, work: Path) -> list[Case]:
    runtime = Runtime(packages, work)
    work.mkdir(parents=True, exist_ok=True)
    cases: list[Case] = []
    for language, snippets in _snippets().items():
        for s in snippets:
            label = f"{s['package']} {s['name']}"
            if language in ("c", "cpp"):
                native = native_cases(runtime, language, s)
                if not native:
                    log(f"left out, no frame in the package: {label}")
                cases.extend(native)
                continue
            if language == "go" and "gold" in s:  # a printed error, labelled at its template
                returned = returned_case(runtime, s)
                cases.extend([returned] if returned else [])
                continue
            cmd, cwd, env = runtime.command(language, s["package"], s["name"], s["code"])
            run = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=300,
                cwd=cwd,
                env={**os.environ, "RUST_BACKTRACE": "0", **env},
            )
            output = (run.stderr or run.stdout).strip()
            root = runtime.installed(language, s["package"])
            gold = innermost(output, language, root) if run.returncode else None
            if gold is None:
                log(f"left out, no frame in the package: {label}: {output[:120]!r}")
                continue
            path, line = gold  # relative to the installed folder, as to the workspace
            ours = packages / s["package"] / path
            if not ours.is_file() or ours.read_bytes() != (root / path).read_bytes():
                log(f"left out, the installed file differs from the workspace's: {label}")
                continue
            lang = LANGUAGES[language]
            for kind, query in (("trace", output), ("message", error_line(output, language))):
                cases.append(Case(s["package"], lang, kind, s["name"], query, path, line))
            # Java's frames name a class and its bare file: ``Validate.isTrue(Validate.java:158)``.
            place = f"({Path(path).name}:{line})" if language == "java" else f"{root}/{path}:{line}"
            for runner in RUNNERS.get(language, ()):
                report = test_report(runtime, runner, s, place)
                if report is None:
                    log(f"no {runner} report, or it names another frame: {label}")
                    continue
                cases.append(
                    Case(s["package"], lang, "test-report", s["name"], report, path, line, runner)
                )
    return cases


def ask(root: Path, index_root: Path, cases: Sequence[Any]) -> list[dict]:
    """Cases whose gold is a place (``path``, ``line``): this set's, ``built_traces.py``'s and
    ``diagnostics.py``'s."""
    return place_rows(
        root,
        index_root,
        cases,
        lambda c: [c.path],
        lambda c, r: r.path == c.path and r.start <= c.line <= r.end,
        "line",
    )


def kind_label(kind: str, runner: str) -> str:
    """A case's row in the table: its kind, and a test report's runner (``test-report, jest``)."""
    return f"{kind}, {runner}" if runner else kind


def table(rows: list[dict]) -> str:
    kinds = ["trace", "message", "returned", "sanitizer"] + [
        kind_label("test-report", runner) for runners in RUNNERS.values() for runner in runners
    ]
    groups = [
        (
            f"{lang} | {kind}",
            lambda r, lang=lang, kind=kind: (
                lang in ("all", r["language"])
                and kind_label(r["kind"], r.get("runner", "")) == kind
            ),
        )
        for lang in (*LANGUAGES.values(), "all")
        for kind in kinds
    ]
    return place_table(rows, groups, "language | kind", "line")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", type=Path, required=True, help="the packages, unpacked")
    ap.add_argument("--index-root", type=Path, default=CACHE_ROOT / "traces-idx")
    ap.add_argument(
        "--work", type=Path, default=CACHE_ROOT / "traces-run", help="compiled classes, npm"
    )
    ap.add_argument("--list", action="store_true", help="print the cases, ask nothing")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    cases = build_cases(args.packages, args.work)
    if args.list:
        for c in cases:
            kind = kind_label(c.kind, c.runner)
            print(f"{c.project}\t{kind}\t{c.path}:{c.line}\t{c.query.splitlines()[0][:140]}")
        return
    rows = ask(args.packages, args.index_root, cases)
    print(table(rows))
    write_report(rows, "runtime-traces", args.out)


if __name__ == "__main__":
    main()
