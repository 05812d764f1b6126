"""Workspace configuration: ``.code-evidence.toml`` at the workspace root.

Every key is optional; README "Configuration" documents each one. Unknown keys are an error
(a typo silently ignored is worse than a clear message), and so are values of the wrong type.

A configuration is immutable: a change is a new :class:`Config` (:meth:`Config.changed`) that
the engine swaps in whole (``Engine.configure``), so a request that started under one
configuration never sees half of another.
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CONFIG_FILE = ".code-evidence.toml"
# Ranking settings `code-evidence tune` fitted on this workspace's history; kept in the index
# folder (per workspace, never in the user's repository) and read under the config file.
TUNED_FILE = "tuned.json"
RERANKERS = ("cross-encoder", "bi-encoder", "none")  # "none": the feature scorer alone
# [ranking] keys whose value is one of a few words.
_CHOICES = {"reranker": RERANKERS, "cross_encoder_for": ("descriptions", "all")}


class ConfigError(ValueError):
    """The configuration file is unreadable or holds an unknown key or a wrongly typed value."""


@dataclass(frozen=True, slots=True)
class IndexConfig:
    exclude: tuple[str, ...] = ()  # gitignore-style patterns, on top of git's
    include_vendor: bool = False  # index vendored code (node_modules, vendor/, third_party/)
    include_generated: bool = False  # index generated/minified files
    max_file_bytes: int = 1_000_000  # larger files are skipped
    max_line_chars: int = 2_000  # a file with a longer line is treated as minified/generated
    window_lines: int = 60  # line windows for files without a grammar
    window_overlap: int = 10
    max_chunk_lines: int = 150  # a class or function longer than this is split


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
    rrf_k: int = 60
    recall_k: int = 100  # candidates per channel
    # Open-file neighbours kept, closest to the question first (0: all of them). A module
    # imported everywhere has thousands of neighbour chunks; scoring all cost hover its budget.
    structural_k: int = 100
    test_penalty: float = 0.5  # multiplier on test chunks unless the query is about tests
    per_file_results: int = 3  # at most this many chunks of one file in the ranked list
    rerank_budget_ms: int = 300  # interactive requests: rerank stops (order kept) past this
    reranker: str = "cross-encoder"  # model scorer after the feature scorer; see RERANKERS
    rerank_pairs: int = 12  # interactive: at most this many pairs go to the model
    rerank_pairs_deep: int = 40  # deep requests: this many, with no time limit
    rerank_blend: float = 0.25  # weight of the model score against the first-stage score
    cross_encoder_for: str = "descriptions"  # or "all": see crossencoder.reads_as_description
    rerank_threads: int = 0  # onnxruntime threads for the cross-encoder (0: physical cores)
    insufficient_below: float = 0.3  # confidence under this: evidence is reported as weak
    # Votes for a file changed at HEAD, halving every 90 days of age (git history only). Off by
    # default: the dev set's workspaces carry no history, so it is unmeasured.
    freshness_weight: float = 0.0
    # Fusion and feature weights; `code-evidence tune` fits them per workspace. A channel
    # weight multiplies that channel's RRF votes; boosts are counted in first-place votes.
    bm25_weight: float = 1.0
    vector_weight: float = 1.0
    # The structural channel lists every neighbour; it votes at half weight so that a chunk
    # found only by being next door does not outrank one both text channels agree on.
    structural_weight: float = 0.5
    exact_symbol_boost: float = 1.0  # the chunk defines a name the question uses
    neighbour_boost: float = 1.0  # imports or is imported by the open file
    same_dir_boost: float = 0.5  # in the open file's folder
    call_boost: float = 1.0  # calls or is called by the open file (each way)
    open_file_factor: float = 0.5  # the user already sees the open file; neighbours are news


@dataclass(frozen=True, slots=True)
class ContextConfig:
    budget_tokens: int = 2_000
    per_file_blocks: int = 2


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
        changes[key] = value
    return dataclasses.replace(section, **changes)


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


def load_config(workspace: Path, tuned: dict[str, Any] | None = None) -> Config:
    """Defaults, then the ``tuned`` ranking settings, then ``.code-evidence.toml`` when the
    workspace has one: what a person wrote down wins over what was fitted."""
    cfg = Config()
    if tuned:
        try:
            cfg = dataclasses.replace(
                cfg, ranking=_apply(cfg.ranking, tuned, f"{TUNED_FILE} [ranking]")
            )
        except ConfigError:
            cfg = Config()  # fitted by another version with other keys: ignore it whole
    path = workspace / CONFIG_FILE
    if not path.is_file():
        return cfg
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
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
