"""JavaScript and TypeScript specifiers that name no relative path: ``tsconfig.json`` ``paths``
and ``baseUrl`` (with ``extends`` chains), and packages of the workspace itself by their
``package.json`` name (``exports``, ``module``, ``main``), so a monorepo's ``@acme/core`` and a
package importing itself by name reach files.

Manifests are untrusted: JSON with comments is read defensively (``jsonc.py``), an ``extends``
or a target that leaves the workspace is ignored, chains are cut at a depth and on a cycle,
and nothing is read from disk here (the caller hands in the manifest texts).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .jsonc import loads_jsonc

Probe = Callable[[str], list[str]]  # a workspace path stem -> the files it names
MAX_EXTENDS = 8  # tsconfig "extends" links followed before giving up
_SOURCE_DIRS = ("src", "lib", "source")


def _inside(base: str, rel: str) -> str | None:
    """``rel`` joined to ``base``, or None when it climbs out of the workspace."""
    if rel.startswith("/") or "\\" in rel:
        return None
    joined = posixpath.normpath(posixpath.join(base, rel)) if rel else (base or ".")
    if joined.startswith(".."):
        return None
    return "" if joined == "." else joined


@dataclass(frozen=True, slots=True)
class _TsConfig:
    """The options of one tsconfig that resolution uses, after its ``extends`` chain:
    ``paths`` patterns are relative to ``paths_base``."""

    base_url: str | None
    paths: dict[str, list[str]]
    paths_base: str


class JsProjects:
    """Lookups built once per index pass from the workspace's ``package.json`` and
    ``tsconfig*.json`` texts (path -> text)."""

    def __init__(self, manifests: Mapping[str, str]) -> None:
        self._texts = {
            p: t
            for p, t in manifests.items()
            if posixpath.basename(p) == "package.json"
            or (posixpath.basename(p).startswith("tsconfig") and p.endswith(".json"))
        }
        self._configs: dict[str, _TsConfig] = {}
        for path in self._texts:
            if posixpath.basename(path) == "tsconfig.json":
                self._configs[posixpath.dirname(path)] = self._load(path, 0, frozenset())
        # Package name -> (its folder, its parsed manifest).
        self._packages: dict[str, tuple[str, dict]] = {}
        for path, text in self._texts.items():
            if posixpath.basename(path) != "package.json":
                continue
            try:
                data = json.loads(text)
            except (ValueError, RecursionError):
                continue
            if isinstance(data, dict) and isinstance(data.get("name"), str):
                self._packages.setdefault(data["name"], (posixpath.dirname(path), data))

    def _load(self, path: str, depth: int, seen: frozenset[str]) -> _TsConfig:
        data = loads_jsonc(self._texts.get(path, ""))
        here = posixpath.dirname(path)
        inherited = _TsConfig(None, {}, here)
        ext = data.get("extends")
        for parent in [ext] if isinstance(ext, str) else ext if isinstance(ext, list) else []:
            if not isinstance(parent, str) or depth >= MAX_EXTENDS:
                continue
            target = _inside(here, parent if parent.endswith(".json") else parent + ".json")
            if target is None or target in seen or target not in self._texts:
                continue  # a package's config (node_modules), outside, or a cycle
            got = self._load(target, depth + 1, seen | {path})
            inherited = _TsConfig(
                got.base_url or inherited.base_url,
                {**inherited.paths, **got.paths},
                got.paths_base if got.paths else inherited.paths_base,
            )
        opts = data.get("compilerOptions")
        if not isinstance(opts, dict):
            return inherited
        base_url = inherited.base_url
        if isinstance(opts.get("baseUrl"), str):
            base_url = _inside(here, opts["baseUrl"])
        paths = inherited.paths
        paths_base = inherited.paths_base
        if isinstance(opts.get("paths"), dict):
            paths = {
                k: [t for t in v if isinstance(t, str)]
                for k, v in opts["paths"].items()
                if isinstance(k, str) and isinstance(v, list)
            }
            paths_base = base_url if base_url is not None else here
        elif base_url is not None and base_url != inherited.base_url and paths:
            paths_base = base_url
        return _TsConfig(base_url, paths, paths_base)

    def _config_for(self, path: str) -> _TsConfig | None:
        d = posixpath.dirname(path)
        while True:
            if d in self._configs:
                return self._configs[d]
            if not d:
                return None
            d = posixpath.dirname(d)

    def resolve(self, path: str, spec: str, probe: Probe) -> list[str]:
        """Files a bare or aliased ``spec`` written in ``path`` names, or ``[]``."""
        cfg = self._config_for(path)
        if cfg is not None:
            for pattern, targets in cfg.paths.items():
                star = _match(pattern, spec)
                if star is None:
                    continue
                for target in targets:
                    stem = _inside(cfg.paths_base, target.replace("*", star, 1))
                    found = probe(stem) if stem is not None else []
                    if found:
                        return found
            if cfg.base_url is not None:
                stem = _inside(cfg.base_url, spec)
                found = probe(stem) if stem is not None else []
                if found:
                    return found
        return self._package(spec, probe)

    def _package(self, spec: str, probe: Probe) -> list[str]:
        """A package of this workspace, by name: its ``exports`` entry for the subpath, else
        ``module``/``main``, else the subpath as a folder of the package. A target in a build
        folder that is not tracked is looked for in the package's source folders."""
        for name, (folder, data) in self._packages.items():
            if spec != name and not spec.startswith(name + "/"):
                continue
            sub = "." + spec[len(name) :]
            targets = _exports_targets(data.get("exports"), sub)
            if sub == ".":
                targets += [
                    data[k] for k in ("source", "module", "main") if isinstance(data.get(k), str)
                ]
            else:
                targets.append(sub)
            if sub == "." and not targets:
                targets.append("./index")
            for target in targets:
                stem = _inside(folder, target)
                if stem is None:
                    continue
                found = probe(stem) or _in_sources(folder, stem, probe)
                if found:
                    return found
        return []


def _match(pattern: str, spec: str) -> str | None:
    """What ``*`` stands for when ``spec`` matches a ``paths`` pattern ("" for an exact one)."""
    if "*" not in pattern:
        return "" if pattern == spec else None
    head, _, tail = pattern.partition("*")
    if spec.startswith(head) and spec.endswith(tail) and len(spec) >= len(head) + len(tail):
        return spec[len(head) : len(spec) - len(tail)]
    return None


def _exports_targets(node: object, sub: str) -> list[str]:
    """Targets ``exports`` gives for the subpath ``sub`` (".", "./x"), every condition."""
    if isinstance(node, str):
        return [node] if sub == "." else []
    if isinstance(node, list):
        return [t for n in node for t in _exports_targets(n, sub)]
    if not isinstance(node, dict):
        return []
    if not any(isinstance(k, str) and k.startswith(".") for k in node):
        return _conditions(node) if sub == "." else []  # conditions only, for "."
    out: list[str] = []
    for key, value in node.items():
        if not isinstance(key, str):
            continue
        star = _match(key, sub)
        if star is None:
            continue
        out += [t.replace("*", star) for t in _conditions(value)]
    return out


def _conditions(node: object) -> list[str]:
    """Every string target under a conditions object, "source" and "types" first."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [t for n in node for t in _conditions(n)]
    if isinstance(node, dict):
        keys = sorted(node, key=lambda k: (k not in ("source", "development"), k == "types"))
        return [t for k in keys for t in _conditions(node[k])]
    return []


def _in_sources(folder: str, stem: str, probe: Probe) -> list[str]:
    """``dist/x/index.js`` built from ``src/x/index.ts``: the same path under a source folder,
    without the build folder and the extension."""
    rel = stem[len(folder) + 1 :] if folder and stem.startswith(folder + "/") else stem
    parts = rel.split("/")
    if len(parts) < 2:
        return []
    rest = posixpath.splitext("/".join(parts[1:]))[0]
    if rest.endswith(".d"):
        rest = rest[:-2]
    for src in _SOURCE_DIRS:
        found = probe(posixpath.join(folder, src, rest) if folder else posixpath.join(src, rest))
        if found:
            return found
    return []
