"""Imports that name namespaces, packages and modules rather than files: C# ``using``, Kotlin and
Scala ``import``, PHP ``use`` and Swift ``import``, mapped to workspace files.

What a file declares (its C# namespace, PHP namespace, Kotlin or Scala package) arrives among
its import specifiers as ``package X`` (see ``chunk/syntax.py``), so no file is read for it.
The two package manifests that decide where code lives are read by the caller and handed in
as text: ``composer.json`` (PSR-4: namespace prefix -> folder) and ``Package.swift`` (targets
and their folders).

- C#: ``using A.B`` -> the files declaring namespace ``A.B``; ``using static A.B.C`` and
  aliases -> ``C.cs`` in namespace ``A.B`` (file named after its type, the C# convention).
- Kotlin/Scala: ``a.b.C`` -> ``C.kt``/``C.scala`` in package ``a.b``, or the whole package when
  no file is named so (a top-level function); ``a.b.*`` -> the package; folder arithmetic like
  Java's (``a/b/C.kt``, ``a/b/C.java``) when nothing declares the package.
- PHP: ``App\\Models\\User`` -> PSR-4 from ``composer.json``, else ``User.php`` in the files
  declaring ``App\\Models``; ``App\\Support\\`` (``use function``) -> that namespace's files.
- Swift: ``import Billing`` -> the ``.swift`` files of target ``Billing`` (``Package.swift``,
  default folder ``Sources/Billing``), else of the shallowest folder named ``Billing``.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from .chunk.syntax import DECLARES

MANIFESTS = frozenset({"composer.json", "Package.swift"})
_JVM_EXTS = (".kt", ".kts", ".scala", ".java")
_FAMILY = {".cs": "csharp", ".php": "php", **{e: "jvm" for e in _JVM_EXTS}}
_SWIFT_TARGET = re.compile(r"\.(target|executableTarget|testTarget|macro)\s*\(\s*name\s*:\s*\"")
_SWIFT_PATH = re.compile(r"\bpath\s*:\s*\"([^\"\n]*)\"")
_MAX_TARGET_CHARS = 20_000  # how far a target's closing parenthesis is looked for


def _stem(path: str) -> str:
    return posixpath.splitext(posixpath.basename(path))[0]


def parent_dirs(path: str) -> list[str]:
    """``a/b/c.py`` -> ``['a/b', 'a']``: the folders above a workspace path, nearest first."""
    out: list[str] = []
    d = posixpath.dirname(path)
    while d:
        out.append(d)
        d = posixpath.dirname(d)
    return out


def _psr4(manifest: str, text: str) -> list[tuple[str, str]]:
    """(namespace prefix, folder) pairs of a composer.json, longest prefix first; a file that
    is not the JSON it should be has none."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    base = posixpath.dirname(manifest)
    out: list[tuple[str, str]] = []
    for section in ("autoload", "autoload-dev"):
        block = data.get(section) if isinstance(data, dict) else None
        rules = block.get("psr-4") if isinstance(block, dict) else None
        if not isinstance(rules, dict):
            continue
        for prefix, dirs in rules.items():
            for d in [dirs] if isinstance(dirs, str) else dirs if isinstance(dirs, list) else []:
                if isinstance(prefix, str) and isinstance(d, str):
                    folder = posixpath.normpath(posixpath.join(base, d)) if d else base
                    out.append((prefix.strip("\\"), "" if folder == "." else folder))
    out.sort(key=lambda x: -len(x[0]))
    return out


def _swift_targets(manifest: str, text: str) -> dict[str, str]:
    """Target name -> its folder, from a Package.swift (read as text, never run)."""
    base = posixpath.dirname(manifest)
    out: dict[str, str] = {}
    found = list(_SWIFT_TARGET.finditer(text))
    for k, m in enumerate(found):
        end = text.find('"', m.end())
        if end < 0:
            continue
        name = text[m.end() : end]
        # The target's arguments run to its closing parenthesis, looked for no further than the
        # next target: the whole scan stays linear in the manifest's size, whatever it holds.
        limit = found[k + 1].start() if k + 1 < len(found) else len(text)
        depth, i, stop = 1, m.end(), min(limit, m.end() + _MAX_TARGET_CHARS)
        while i < stop and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        path = _SWIFT_PATH.search(text, m.end(), i)
        default = "Tests" if m.group(1) == "testTarget" else "Sources"
        rel = path.group(1) if path else f"{default}/{name}"
        folder = posixpath.normpath(posixpath.join(base, rel))
        out[name] = "" if folder == "." else folder
    return out


class Namespaces:
    """Resolves namespace-style imports against one set of workspace paths."""

    def __init__(
        self,
        known: Iterable[str],
        declared: Mapping[str, Sequence[str]],
        manifests: Mapping[str, str],
    ) -> None:
        self.known = frozenset(known)
        # (family, namespace) -> files that declare it.
        self._declared: dict[tuple[str, str], list[str]] = defaultdict(list)
        for path in sorted(declared):
            family = _FAMILY.get(posixpath.splitext(path)[1])
            for spec in declared[path]:
                if family and spec.startswith(DECLARES):
                    self._declared[(family, spec[len(DECLARES) :])].append(path)
        # JVM sources by folder and by file name, for packages nothing declares.
        self._jvm_names: dict[str, list[str]] = defaultdict(list)
        self._jvm_dirs: dict[str, list[str]] = defaultdict(list)
        self._swift: list[str] = []
        for path in sorted(self.known):
            if path.endswith(_JVM_EXTS):
                self._jvm_names[posixpath.basename(path)].append(path)
                self._jvm_dirs[posixpath.dirname(path)].append(path)
            elif path.endswith(".swift"):
                self._swift.append(path)
        self._psr4: list[tuple[str, str]] = []
        self._targets: dict[str, str] = {}
        for manifest in sorted(manifests):
            name = posixpath.basename(manifest)
            if name == "composer.json":
                self._psr4.extend(_psr4(manifest, manifests[manifest]))
            elif name == "Package.swift":
                for target, folder in _swift_targets(manifest, manifests[manifest]).items():
                    self._targets.setdefault(target, folder)
        self._psr4.sort(key=lambda x: -len(x[0]))
        self._modules: dict[str, list[str]] = {}  # Swift module -> files, as looked up
        self._jvm_wildcards: dict[str, list[str]] = {}  # package folder -> files, as looked up

    # ------------------------------------------------------------------ C#

    def csharp(self, spec: str) -> list[str]:
        files = self._declared.get(("csharp", spec))
        if files:
            return list(files)
        namespace, _, name = spec.rpartition(".")
        return [f for f in self._declared.get(("csharp", namespace), []) if _stem(f) == name]

    # ------------------------------------------------------------------ Kotlin / Scala

    def jvm(self, spec: str) -> list[str]:
        parts = [p for p in spec.split(".") if p]
        if not parts:
            return []
        if parts[-1] == "*":
            pkg = ".".join(parts[:-1])
            files = self._declared.get(("jvm", pkg))
            if files:
                return list(files)
            suffix = "/".join(parts[:-1])
            if suffix not in self._jvm_wildcards:
                self._jvm_wildcards[suffix] = [
                    f
                    for d, fs in self._jvm_dirs.items()
                    if d == suffix or d.endswith("/" + suffix)
                    for f in fs
                ]
            return list(self._jvm_wildcards[suffix])
        for k in range(len(parts) - 1, 0, -1):  # the longest declared package first
            files = self._declared.get(("jvm", ".".join(parts[:k])))
            if files:
                named = [f for f in files if _stem(f) == parts[k]]
                return named or list(files)
        for n in (len(parts), len(parts) - 1):  # nothing declares it: folders, as for Java
            for ext in _JVM_EXTS:
                rel = "/".join(parts[:n]) + ext
                hits = [
                    p
                    for p in self._jvm_names.get(posixpath.basename(rel), [])
                    if p == rel or p.endswith("/" + rel)
                ]
                if hits:
                    return hits
        return []

    # ------------------------------------------------------------------ PHP

    def php(self, spec: str) -> list[str]:
        spec = spec.lstrip("\\")
        if spec.endswith("\\"):
            return list(self._declared.get(("php", spec.rstrip("\\")), []))
        for prefix, folder in self._psr4:
            if prefix and not spec.startswith(prefix + "\\"):
                continue
            rest = spec[len(prefix) :].lstrip("\\").replace("\\", "/")
            cand = posixpath.join(folder, rest + ".php") if folder else rest + ".php"
            if cand in self.known:
                return [cand]
        namespace, _, name = spec.rpartition("\\")
        return [f for f in self._declared.get(("php", namespace), []) if _stem(f) == name]

    # ------------------------------------------------------------------ Swift

    def swift(self, module: str) -> list[str]:
        if not module:
            return []
        found = self._modules.get(module)
        if found is None:
            found = self._modules[module] = self._swift_module(module)
        return list(found)

    def _swift_module(self, module: str) -> list[str]:
        folder = self._targets.get(module)
        if folder is None:
            dirs = {
                d for p in self._swift for d in parent_dirs(p) if posixpath.basename(d) == module
            }
            # The shallowest folder of that name (Sources/Billing over Tests/x/Billing).
            folder = min(dirs, key=lambda d: (d.count("/"), d)) if dirs else None
        if folder is None:
            return []
        prefix = f"{folder}/" if folder else ""
        return [p for p in self._swift if p.startswith(prefix)]
