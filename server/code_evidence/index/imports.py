"""Map raw import specifiers (as ``chunk.py`` records them) to files of the workspace.

The import graph feeds structural retrieval: "what does this file depend on, who depends on
it". Only edges to files we indexed matter, so every specifier is resolved against the set of
known paths and anything else (standard library, third-party packages) is dropped. No file is
read here: resolution is pure path arithmetic over lookup tables built once per index pass (the
languages added later resolve in ``include_paths.py`` and ``namespaces.py``, which also use the
packages files declare and the package manifests the caller hands in).
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from .chunk.syntax import DECLARES
from .include_paths import IncludePaths
from .jsprojects import JsProjects
from .namespaces import MANIFESTS, Namespaces, parent_dirs

_JS_EXTS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
# TypeScript ESM code imports "./x.js" and means "./x.ts".
_JS_RUNTIME_EXTS = (".js", ".jsx", ".mjs", ".cjs")


def js_module_files(stem: str) -> list[str]:
    """Where a JavaScript or TypeScript module imported as ``stem`` (a path without ``./``) may
    live, in the order resolution tries them: as written when it has an extension, the
    TypeScript source of a runtime extension (``x.js`` means ``x.ts`` in TypeScript ESM), with
    each extension, then as a directory with an index file. The resolver takes the first the
    workspace holds; a pasted "Cannot find module './x'" names them all."""
    out: list[str] = []
    if stem:
        base, ext = posixpath.splitext(stem)
        if ext:
            out.append(stem)
        if ext in _JS_RUNTIME_EXTS:
            out.extend(base + e for e in (".ts", ".tsx", ".mts", ".cts"))
        out.extend(stem + e for e in _JS_EXTS)
    out.extend(posixpath.join(stem, f"index{e}") for e in _JS_EXTS)
    return out


# Manifests that decide where modules live, read by the index pass for the resolver.
RESOLUTION_MANIFESTS = MANIFESTS | {"go.mod", "package.json", "Cargo.toml"}
_GO_MODULE = re.compile(r"^\s*module\s+\"?([^\s\"/][^\s\"]*)\"?", re.MULTILINE)
_CARGO_NAME = re.compile(r"^\s*\[(package|lib)\]([^\[]*)", re.MULTILINE)
_TOML_KEY = re.compile(r"^\s*(name|path)\s*=\s*\"([^\"\n]+)\"", re.MULTILINE)


def is_manifest(path: str) -> bool:
    """A file the resolver needs the text of (``tsconfig*.json`` included)."""
    name = posixpath.basename(path)
    return name in RESOLUTION_MANIFESTS or (name.startswith("tsconfig") and name.endswith(".json"))


class ImportResolver:
    """Resolves specifiers against one fixed set of workspace paths.

    Build it once per index pass: the constructor indexes every path by its module-style
    suffixes so each lookup is a dict hit, not a scan.
    """

    def __init__(
        self,
        known_paths: Iterable[str],
        declared: Mapping[str, Sequence[str]] | None = None,
        manifests: Mapping[str, str] | None = None,
    ) -> None:
        """``declared``: each file's import specifiers, for the packages and namespaces files
        declare (``namespaces.py``); ``manifests``: the text of ``composer.json`` and
        ``Package.swift`` files by path. Without them those lookups fall back to paths."""
        self.known: frozenset[str] = frozenset(known_paths)
        # C/C++, Ruby and PHP paths; C#, Kotlin, Scala, PHP and Swift namespaces.
        self._paths = IncludePaths(self.known)
        self._spaces = Namespaces(self.known, declared or {}, manifests or {})
        self._js_projects = JsProjects(manifests or {})
        # Go: module path (go.mod) -> the directory holding that go.mod.
        self._go_modules: dict[str, str] = {}
        for mpath, text in (manifests or {}).items():
            if posixpath.basename(mpath) == "go.mod":
                m = _GO_MODULE.search(text[:20_000])
                if m:
                    self._go_modules[m.group(1)] = posixpath.dirname(mpath)
        # Python: dotted suffix ("flask.app") -> files that could be that module.
        self._py: dict[str, list[str]] = defaultdict(list)
        # Go: directory -> non-test .go files; Java: directory -> .java files.
        self._go_dirs: dict[str, list[str]] = defaultdict(list)
        self._java_dirs: dict[str, list[str]] = defaultdict(list)
        # Java: "Y.java" -> paths, narrowed by suffix at lookup time.
        self._java_names: dict[str, list[str]] = defaultdict(list)
        # Rust: crate name (dashes as underscores) -> its src directory.
        self._rust_crates: dict[str, str] = {}
        for path in sorted(self.known):
            stem, ext = posixpath.splitext(path)
            if ext in (".py", ".pyi"):
                parts = stem.split("/")
                if parts[-1] == "__init__":
                    parts.pop()
                for i in range(len(parts)):
                    # "flask.app" is importable from src/ only if src/ is not itself a package;
                    # otherwise stdlib names ("json") would hit every same-named submodule.
                    if i and self._is_package("/".join(parts[:i])):
                        continue
                    self._py[".".join(parts[i:])].append(path)
            elif ext == ".go":
                if not path.endswith("_test.go"):
                    self._go_dirs[posixpath.dirname(path)].append(path)
            elif ext == ".java":
                self._java_dirs[posixpath.dirname(path)].append(path)
                self._java_names[posixpath.basename(path)].append(path)
            elif ext == ".rs" and posixpath.basename(path) in ("lib.rs", "main.rs"):
                src = posixpath.dirname(path)
                if posixpath.basename(src) == "src":
                    crate_dir = posixpath.dirname(src)
                    name = posixpath.basename(crate_dir).replace("-", "_")
                    if name and (name not in self._rust_crates or path.endswith("lib.rs")):
                        self._rust_crates[name] = src
        # Cargo.toml: a crate's own name (and lib path) wins over its folder's name.
        for mpath, text in (manifests or {}).items():
            if posixpath.basename(mpath) != "Cargo.toml":
                continue
            crate_dir = posixpath.dirname(mpath)
            keys: dict[str, str] = {}
            for section, body in _CARGO_NAME.findall(text[:50_000]):
                for key, value in _TOML_KEY.findall(body):
                    keys.setdefault(f"{section}.{key}", value)
            name = keys.get("lib.name") or keys.get("package.name")
            lib = keys.get("lib.path", "src/lib.rs")
            lib_path = posixpath.normpath(posixpath.join(crate_dir, lib))
            if name and not lib_path.startswith("..") and lib_path in self.known:
                self._rust_crates[name.replace("-", "_")] = posixpath.dirname(lib_path)

    def _is_package(self, directory: str) -> bool:
        return f"{directory}/__init__.py" in self.known or f"{directory}/__init__.pyi" in self.known

    def resolve(self, path: str, language: str, specs: Sequence[str]) -> list[str]:
        """Known files that ``specs`` of ``path`` refer to, in specifier order, without
        duplicates and never ``path`` itself."""
        out: dict[str, None] = {}
        for spec in specs:
            if not spec:
                continue
            for target in self._resolve_one(path, language, spec):
                if target != path:
                    out[target] = None
        return list(out)

    def _resolve_one(self, path: str, language: str, spec: str) -> list[str]:
        if language == "python":
            return self._python(path, spec)
        if language in ("javascript", "typescript", "tsx"):
            return self._js(path, spec)
        if language == "go":
            return self._go(spec)
        if language == "rust":
            return self._rust(path, spec)
        if language == "java":
            return self._java(spec)
        return self._added(path, language, spec)

    def _added(self, path: str, language: str, spec: str) -> list[str]:
        """The languages added in issue 18 (``include_paths.py``, ``namespaces.py``)."""
        if spec.startswith(DECLARES):
            return []  # what the file declares, not what it imports
        if language in ("c", "cpp"):
            return self._paths.include(path, spec)
        if language == "ruby":
            return self._paths.require(path, spec)
        if language == "php":
            if "\\" not in spec and ("/" in spec or "." in spec):
                return self._paths.php_include(path, spec)
            return self._spaces.php(spec)
        if language == "csharp":
            return self._spaces.csharp(spec)
        if language in ("kotlin", "scala"):
            return self._spaces.jvm(spec)
        if language == "swift":
            return self._spaces.swift(spec)
        return []

    # ------------------------------------------------------------------ python

    def _py_module_at(self, base: str, dotted: str) -> list[str]:
        rel = dotted.replace(".", "/")
        stem = posixpath.join(base, rel) if base else rel
        for cand in (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi", f"{stem}/__init__.pyi"):
            if cand in self.known:
                return [cand]
        return []

    def _python(self, path: str, spec: str) -> list[str]:
        if spec.startswith("."):
            dots = len(spec) - len(spec.lstrip("."))
            rest = spec[dots:]
            base = posixpath.dirname(path)
            for _ in range(dots - 1):
                if not base:
                    return []  # climbs above the workspace root
                base = posixpath.dirname(base)
            if not rest:
                return self._py_module_at(base, "__init__")
            return self._py_module_at(base, rest)
        found = self._py_module_at("", spec)
        if found:
            return found
        # A script outside any package has its own directory on sys.path: ``import helpers``.
        here = posixpath.dirname(path)
        if here and not self._is_package(here):
            found = self._py_module_at(here, spec)
            if found:
                return found
        # Source roots (src/, lib/, a monorepo's package dirs): the shallowest suffix match.
        cands = self._py.get(spec, [])
        if any(c.endswith(".py") for c in cands):
            cands = [c for c in cands if c.endswith(".py")]
        if not cands:
            return []
        best = min(c.count("/") for c in cands)
        return [c for c in cands if c.count("/") == best]

    # ------------------------------------------------------------------ javascript / typescript

    def _js_probe(self, stem: str) -> list[str]:
        """The first of :func:`js_module_files` the workspace holds."""
        return next(([c] for c in js_module_files(stem) if c in self.known), [])

    def _js(self, path: str, spec: str) -> list[str]:
        spec = spec.split("?", 1)[0].split("#", 1)[0]
        if spec.startswith(("./", "../")) or spec in (".", ".."):
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
            if joined == ".." or joined.startswith("../"):
                return []
            return self._js_probe("" if joined == "." else joined)
        if spec.startswith(("@/", "~/")):
            # The common bundler alias for src/.
            rest = posixpath.normpath(spec[2:])
            return self._js_probe(f"src/{rest}") or self._js_probe(rest)
        if spec.startswith("/"):
            return []
        # tsconfig paths and baseUrl, then packages of this workspace by name.
        found = self._js_projects.resolve(path, spec, self._js_probe)
        if found or spec.startswith("@") or "/" not in spec:
            return found  # a scoped or bare package from outside
        # "src/utils" style (baseUrl-relative without a tsconfig): only a workspace file.
        rest = posixpath.normpath(spec)
        return [] if rest.startswith("..") else self._js_probe(rest)

    # ------------------------------------------------------------------ go

    def _go(self, spec: str) -> list[str]:
        if self._go_modules:
            # go.mod says which import paths are this workspace's: exact, no guessing.
            for module, root in self._go_modules.items():
                if spec == module or spec.startswith(module + "/"):
                    rest = spec[len(module) + 1 :]
                    d = posixpath.join(root, rest) if root else rest
                    return list(self._go_dirs.get(posixpath.normpath(d) if d else "", []))
            return []  # another module: standard library or a dependency
        parts = [p for p in spec.split("/") if p]
        if len(parts) <= 1:
            # "fmt", "os": standard library unless the workspace has exactly that directory.
            return list(self._go_dirs.get(spec, []))
        # The module path prefix is unknown without go.mod; the longest directory suffix wins.
        for i in range(len(parts)):
            files = self._go_dirs.get("/".join(parts[i:]))
            if files:
                return list(files)
        return []

    # ------------------------------------------------------------------ rust

    def _rust_src_root(self, path: str) -> str:
        """The crate's source directory: the nearest ``src`` (or lib.rs/main.rs) above."""
        for d in parent_dirs(path):
            if posixpath.basename(d) == "src":
                return d
            if f"{d}/lib.rs" in self.known or f"{d}/main.rs" in self.known:
                return d
        return "" if "lib.rs" in self.known or "main.rs" in self.known else "src"

    def _rust_module_of(self, path: str, src: str) -> list[str]:
        """Module path of a file inside its crate: ``src/a/b.rs`` -> ``[a, b]``."""
        rel = path[len(src) + 1 :] if src and path.startswith(src + "/") else path
        parts = posixpath.splitext(rel)[0].split("/")
        if parts and parts[-1] in ("mod", "lib", "main"):
            parts.pop()
        return [p for p in parts if p]

    def _rust_file(self, src: str, segs: list[str]) -> list[str]:
        """The deepest file among ``segs``' prefixes: the tail may name an item, not a module."""
        for n in range(len(segs), 0, -1):
            stem = posixpath.join(src, *segs[:n]) if src else "/".join(segs[:n])
            for cand in (f"{stem}.rs", f"{stem}/mod.rs"):
                if cand in self.known:
                    return [cand]
        return []

    def _rust(self, path: str, spec: str) -> list[str]:
        segs = [s for s in spec.replace(" ", "").split("::") if s and s != "*"]
        if not segs:
            return []
        head = segs[0]
        if head in ("crate", "self", "super"):
            src = self._rust_src_root(path)
            if head == "crate":
                return self._rust_file(src, segs[1:])
            module = self._rust_module_of(path, src)
            rest = segs[1:]
            if head == "super":
                while rest and rest[0] == "super":
                    rest = rest[1:]
                    module = module[:-1]
                module = module[:-1]
            return self._rust_file(src, module + rest)
        crate_src = self._rust_crates.get(head)
        if crate_src is not None:
            return self._rust_file(crate_src, segs[1:])
        return []

    # ------------------------------------------------------------------ java

    def _java(self, spec: str) -> list[str]:
        parts = [p for p in spec.split(".") if p]
        if not parts:
            return []
        if parts[-1] == "*":
            suffix = "/".join(parts[:-1])
            return [
                f
                for d, files in self._java_dirs.items()
                if d == suffix or d.endswith("/" + suffix)
                for f in files
            ]
        # "com.x.Y", or a static member / nested class one level below it.
        for n in (len(parts), len(parts) - 1):
            if n < 1:
                break
            rel = "/".join(parts[:n]) + ".java"
            name = posixpath.basename(rel)
            hits = [p for p in self._java_names.get(name, []) if p == rel or p.endswith("/" + rel)]
            if hits:
                return hits
        return []
