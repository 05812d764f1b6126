"""Workspace configuration: ``.code-evidence.toml`` at the workspace root.

Every key is optional; README "Configuration" documents each one. Unknown keys are an error
(a typo silently ignored is worse than a clear message), and so are values of the wrong type
or outside the key's hard range. The file comes from the repository, so it is untrusted: the
ranges (written next to each key, checked for the file, ``tuned.json`` and
:meth:`Config.changed` alike) keep it from exhausting the machine (a million threads, a
recall of 2**63 chunks) or breaking the arithmetic (``rrf_k = -1`` divides by zero), and the
file itself is bounded in size and nesting.

A configuration is immutable: a change is a new :class:`Config` (:meth:`Config.changed`) that
the engine swaps in whole (``Engine.configure``), so a request that started under one
configuration never sees half of another.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .api import MAX_BUDGET_TOKENS, MAX_LIMIT

CONFIG_FILE = ".code-evidence.toml"
# Ranking settings `code-evidence tune` fitted on this workspace's history; kept in the index
# folder (per workspace, never in the user's repository) and read under the config file.
TUNED_FILE = "tuned.json"
RERANKERS = ("cross-encoder", "bi-encoder", "none")  # "none": the feature scorer alone
# [ranking] keys whose value is one of a few words.
_CHOICES = {"reranker": RERANKERS, "cross_encoder_for": ("descriptions", "all")}


MAX_FILE_BYTES = 256_000  # a larger .code-evidence.toml is refused unread
MAX_PATTERNS = 1_000  # [index] exclude: patterns, ...
MAX_PATTERN_CHARS = 1_000  # ... of at most this many characters each


class ConfigError(ValueError):
    """The configuration file is unreadable or holds an unknown key, a wrongly typed value or
    a value outside the key's range."""


def physical_cores() -> int:
    """Cores this process may run on, counting SMT siblings once: onnxruntime's matrix kernels
    gain nothing from a second thread on the same core and lose to the contention (and the
    most threads a configuration may ask for)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
    cores: set[tuple[str, str]] = set()
    for cpu in cpus:
        topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            package = (topo / "physical_package_id").read_text().strip()
            core = (topo / "core_id").read_text().strip()
        except OSError:
            return max(1, len(cpus))
        cores.add((package, core))
    return max(1, len(cores))


Bound = int | float | Callable[[], int]


def _key(default: Any, low: Bound, high: Bound) -> Any:
    """A numeric key with its hard range ``low``..``high`` (inclusive; a callable bound is
    this machine's, such as its physical cores)."""
    return field(default=default, metadata={"range": (low, high)})


@dataclass(frozen=True, slots=True)
class IndexConfig:
    # gitignore-style patterns, on top of git's (at most MAX_PATTERNS of MAX_PATTERN_CHARS)
    exclude: tuple[str, ...] = ()
    include_vendor: bool = False  # index vendored code (node_modules, vendor/, third_party/)
    include_generated: bool = False  # index generated/minified files
    # Larger files are skipped. At most 10 MB: a file is read, chunked and held whole.
    max_file_bytes: int = _key(1_000_000, 1, 10_000_000)
    # A file with a longer line is treated as minified/generated.
    max_line_chars: int = _key(2_000, 1, 1_000_000)
    window_lines: int = _key(60, 1, 1_000)  # line windows for files without a grammar
    window_overlap: int = _key(10, 0, 999)  # at most window_lines - 1 of it takes effect
    max_chunk_lines: int = _key(150, 1, 10_000)  # a class or function longer is split


@dataclass(frozen=True, slots=True)
class StagesConfig:
    """Switches for each enhancement; each one off degrades to the stage before it."""

    lexical: bool = True
    vectors: bool = True
    structural: bool = True
    features: bool = True
    rerank: bool = True


@dataclass(frozen=True, slots=True)
class RankingConfig:
    rrf_k: int = _key(60, 1, 10_000)  # votes are 1 / (rrf_k + rank): 0 or less breaks them
    recall_k: int = _key(100, 1, 1_000)  # candidates per channel
    # Open-file neighbours kept, closest to the question first (0: all of them). A module
    # imported everywhere has thousands of neighbour chunks; scoring all cost hover its budget.
    structural_k: int = _key(100, 0, 10_000)
    # A multiplier on test chunks unless the query is about tests.
    test_penalty: float = _key(0.5, 0.0, 1.0)
    # At most this many chunks of one file in the ranked list before the other files' come: a
    # question with no open file asks for a place, and the place's near-twins (a class's
    # overloads) are in the same file, so five; one asked from an open file wants its partners
    # (what else must change), so three, the open file itself twice that.
    per_file_results: int = _key(5, 1, MAX_LIMIT)
    per_file_results_open: int = _key(3, 1, MAX_LIMIT)
    # Distinct places first: a file already listed comes again only when its next chunk
    # scores more than this many times the best chunk of a file not listed yet (1: off; off by
    # default: at 1.5 it cost chunk@10 on Python, 0.01-0.05, and was mixed elsewhere).
    distinct_margin: float = _key(1.0, 1.0, 100.0)
    # Interactive requests: rerank stops (order kept) past this.
    rerank_budget_ms: int = _key(300, 0, 60_000)
    reranker: str = "cross-encoder"  # model scorer after the feature scorer; see RERANKERS
    rerank_pairs: int = _key(12, 0, 200)  # interactive: at most this many pairs go to the model
    rerank_pairs_deep: int = _key(40, 0, 200)  # deep requests: this many, with no time limit
    # Weight of the model score against the first-stage score.
    rerank_blend: float = _key(0.25, 0.0, 10.0)
    cross_encoder_for: str = "descriptions"  # or "all": see crossencoder.reads_as_description
    # Cross-encoder pairs run at once, one onnxruntime thread each (0: physical cores).
    rerank_threads: int = _key(0, 0, physical_cores)
    # Confidence (the chance the first file is right) under this: evidence is reported as weak.
    # The line fitted with the confidence model (search/confidence_model.json, "line").
    insufficient_below: float = _key(0.14, 0.0, 1.0)
    # Votes for a file changed at HEAD, halving every 90 days of age (git history only). Off by
    # default: the dev set's workspaces carry no history, so it is unmeasured.
    freshness_weight: float = _key(0.0, 0.0, 100.0)
    # Fusion and feature weights; `code-evidence tune` fits them per workspace. A channel
    # weight multiplies that channel's RRF votes; boosts are counted in first-place votes.
    bm25_weight: float = _key(1.0, 0.0, 100.0)
    vector_weight: float = _key(1.0, 0.0, 100.0)
    # The structural channel lists every neighbour; it votes at half weight so that a chunk
    # found only by being next door does not outrank one both text channels agree on.
    structural_weight: float = _key(0.5, 0.0, 100.0)
    # The chunk defines a name the question uses.
    exact_symbol_boost: float = _key(1.0, 0.0, 100.0)
    neighbour_boost: float = _key(1.0, 0.0, 100.0)  # imports or is imported by the open file
    same_dir_boost: float = _key(0.5, 0.0, 100.0)  # in the open file's folder
    call_boost: float = _key(1.0, 0.0, 100.0)  # calls or is called by the open file (each way)
    # The open file's own chunks: a multiplier (1: no penalty; measured on variant c, where
    # the answer is in the open file, a penalty hid it: docs/quality.md) and votes for those a
    # text channel found (the file one is in is the likeliest place of all).
    open_file_factor: float = _key(1.0, 0.0, 1.0)
    open_file_boost: float = _key(3.0, 0.0, 100.0)
    # Co-change (git history): the open file's strongest partners are a recall channel, voting
    # at this weight, and a feature adding up to this many votes by partner strength (a share
    # of the open file's commits that also touched the partner, in [0, 1]).
    cochange_weight: float = _key(1.0, 0.0, 100.0)
    cochange_boost: float = _key(3.0, 0.0, 100.0)
    cochange_k: int = _key(10, 0, 1_000)  # partner files read per question
    # Build outputs and generated copies of other files (dist/, a Deno mirror of src/).
    generated_factor: float = _key(0.3, 0.0, 1.0)
    # C/C++ prototypes and type declaration files (.d.ts, .pyi), unless asked about types.
    declaration_factor: float = _key(0.5, 0.0, 1.0)
    # Votes for the source of the open file when the open file is a generated copy of it.
    source_of_open_boost: float = _key(2.0, 0.0, 100.0)
    # Votes for a file the question's Conventional Commits scope names ("fix(router): ..."
    # -> router.go, "refactor(binding): ..." -> binding/): half an explicit path's.
    scope_boost: float = _key(0.5, 0.0, 100.0)
    # Votes, with no open file, for the candidates' most often changed file in the git history,
    # less on a log scale for the others (index/churn.py; tag often-changed).
    change_prior_boost: float = _key(1.0, 0.0, 100.0)
    # Examples, benchmarks, docs folders and packaging glue, for change questions whose
    # headline does not ask about them (tag outside-source).
    outside_source_factor: float = _key(0.5, 0.0, 1.0)
    # Go files a build constraint leaves out of a default build (tag build-variant).
    build_variant_factor: float = _key(0.5, 0.0, 1.0)


@dataclass(frozen=True, slots=True)
class ContextConfig:
    budget_tokens: int = _key(2_000, 0, MAX_BUDGET_TOKENS)
    per_file_blocks: int = _key(2, 1, 50)


@dataclass(frozen=True, slots=True)
class Config:
    index: IndexConfig = field(default_factory=IndexConfig)
    stages: StagesConfig = field(default_factory=StagesConfig)
    ranking: RankingConfig = field(default_factory=RankingConfig)
    context: ContextConfig = field(default_factory=ContextConfig)

    def changed(self, **sections: dict[str, Any]) -> Config:
        """A copy with keys of some sections replaced, e.g.
        ``cfg.changed(stages={"vectors": False})``; values are checked like the file's."""
        out = self
        for name, values in sections.items():
            section = getattr(out, name)
            out = dataclasses.replace(out, **{name: _apply(section, values, f"[{name}]")})
        return out


def _apply(section: Any, values: dict[str, Any], where: str) -> Any:
    """``section`` with ``values`` applied, each checked against the field's type."""
    known = {f.name: f for f in dataclasses.fields(section)}
    changes: dict[str, Any] = {}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(f"{where}: unknown key {key!r} (known: {', '.join(sorted(known))})")
        current = getattr(section, key)
        if isinstance(current, bool):
            ok = isinstance(value, bool)
        elif isinstance(current, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif isinstance(current, float):
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            value = float(value)
        elif isinstance(current, tuple):
            ok = isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
            value = tuple(value)
        else:
            ok = isinstance(value, type(current))
        if not ok:
            raise ConfigError(
                f"{where}.{key}: expected {type(current).__name__}, got {type(value).__name__}"
            )
        allowed = _CHOICES.get(key) if isinstance(section, RankingConfig) else None
        if allowed is not None and value not in allowed:
            raise ConfigError(f"{where}.{key}: {value!r} is not one of {', '.join(allowed)}")
        _check_range(known[key], value, f"{where}.{key}")
        changes[key] = value
    return dataclasses.replace(section, **changes)


def _bounds(f: dataclasses.Field[Any]) -> tuple[float, float] | None:
    if "range" not in f.metadata:
        return None
    low, high = f.metadata["range"]
    return (low() if callable(low) else low), (high() if callable(high) else high)


def _check_range(f: dataclasses.Field[Any], value: Any, where: str) -> None:
    bounds = _bounds(f)
    if bounds is not None:
        low, high = bounds
        if (isinstance(value, float) and not math.isfinite(value)) or not low <= value <= high:
            why = " (this machine's physical cores)" if f.name == "rerank_threads" else ""
            raise ConfigError(f"{where}: {value!r} is outside {low}..{high}{why}")
    if f.name == "exclude":
        if len(value) > MAX_PATTERNS:
            raise ConfigError(f"{where}: {len(value)} patterns; at most {MAX_PATTERNS}")
        long = next((p for p in value if len(p) > MAX_PATTERN_CHARS), None)
        if long is not None:
            raise ConfigError(
                f"{where}: a pattern of {len(long)} characters; at most {MAX_PATTERN_CHARS}"
            )


def key_limits() -> dict[str, tuple[str, str, str]]:
    """``"[section] key"`` -> (type, range, default) as docs/configuration.md writes them (a
    test holds the two together)."""
    kinds = {bool: "boolean", int: "integer", float: "number", str: "string"}
    out: dict[str, tuple[str, str, str]] = {}
    for section in dataclasses.fields(Config):
        defaults = getattr(Config(), section.name)
        for f in dataclasses.fields(defaults):
            default = getattr(defaults, f.name)
            bounds = _bounds(f)
            if f.name == "rerank_threads":
                text = "0 to the physical cores"
            elif bounds is not None:
                text = "–".join(f"{b:,}" if isinstance(b, int) else f"{b:g}" for b in bounds)
            elif f.name == "exclude":
                text = f"≤ {MAX_PATTERNS:,} patterns of ≤ {MAX_PATTERN_CHARS:,} characters"
            elif f.name in _CHOICES:
                text = ", ".join(f'`"{c}"`' for c in _CHOICES[f.name])
            else:
                text = ""
            kind = kinds.get(type(default), "list of strings")
            shown = json.dumps(list(default) if isinstance(default, tuple) else default)
            out[f"[{section.name}] {f.name}"] = (kind, text, f"`{shown}`")
    return out


def read_tuned(index_dir: Path) -> dict[str, Any]:
    """The stored tune result (``{}`` when there is none). A damaged file is treated as absent:
    tuning is an optimisation, and the defaults always work."""
    try:
        data = json.loads((index_dir / TUNED_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return data if isinstance(data, dict) and isinstance(data.get("ranking"), dict) else {}


def describe_tuned(tuned: dict[str, Any]) -> str:
    """What ``status`` says about the ranking: the defaults, or the stored tune result with its
    validation gain."""
    if not tuned:
        return "defaults"
    settings = ", ".join(f"{k}={v}" for k, v in tuned["ranking"].items())
    before = tuned.get("before", {}).get("validation", {}).get("mrr")
    after = tuned.get("after", {}).get("validation", {}).get("mrr")
    gain = (
        f"; validation MRR@10 {before:.3f} -> {after:.3f}"
        if isinstance(before, float) and isinstance(after, float)
        else ""
    )
    return f"tuned {str(tuned.get('created', ''))[:10]}: {settings}{gain}"


def load_config(
    workspace: Path, tuned: dict[str, Any] | None = None, use_file: bool = True
) -> Config:
    """Defaults, then the ``tuned`` ranking settings, then ``.code-evidence.toml`` when the
    workspace has one (and ``use_file``): what a person wrote down wins over what was
    fitted."""
    cfg = Config()
    if tuned:
        try:
            cfg = dataclasses.replace(
                cfg, ranking=_apply(cfg.ranking, tuned, f"{TUNED_FILE} [ranking]")
            )
        except ConfigError:
            cfg = Config()  # fitted by another version with other keys: ignore it whole
    path = workspace / CONFIG_FILE
    if not use_file or not path.is_file():
        return cfg
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            raise ConfigError(f"{path}: larger than {MAX_FILE_BYTES} bytes")
        data = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    except RecursionError as exc:  # tomllib recurses into nested arrays and inline tables
        raise ConfigError(f"{path}: nested too deeply") from exc
    sections = {f.name for f in dataclasses.fields(cfg)}
    for name, values in data.items():
        if name not in sections:
            raise ConfigError(
                f"{CONFIG_FILE}: unknown section [{name}] (known: {', '.join(sorted(sections))})"
            )
        if not isinstance(values, dict):
            raise ConfigError(f"{CONFIG_FILE}: [{name}] must be a table")
        cfg = dataclasses.replace(cfg, **{name: _apply(getattr(cfg, name), values, f"[{name}]")})
    return cfg


def load_config_or_defaults(workspace: Path, tuned: dict[str, Any]) -> tuple[Config, str | None]:
    """For a host that must keep serving: a ``.code-evidence.toml`` that does not hold is
    ignored whole, and the second value says why (``None`` when the file held). ``tuned``:
    the stored tune result, as :func:`read_tuned` gives it."""
    ranking = tuned.get("ranking")
    try:
        return load_config(workspace, ranking), None
    except ConfigError as exc:
        return load_config(workspace, ranking, use_file=False), (
            f"{CONFIG_FILE} ignored, defaults used: {exc}"
        )
