#!/usr/bin/env python3
"""Chinese questions on the dev docstring sets: English vs Chinese on the same gold.

Each shared docstring case is asked twice, in English (the shared ``query``) and in Chinese
(``bench/zh/<dataset>.zh.jsonl``, see its README), on the same sdist workspace and index; the
cases of the packages documented in Chinese (``docstring_sets.py``: tushare, wechatpy, efinance,
akshare, jqdatasdk, lunar-python, easytrader, WeRoBot, baostock) in Chinese, and in English
where the team translated the questions (``bench/zh/<dataset>.en.jsonl``); where it also
translated the package's comments and docstrings (``doc_translation.py``), the dataset
``<dataset>.en-docs`` asks the same cases in both languages on that English-documented twin,
so one code base is measured documented in each language. The packages documented in English
held out (requests, rich, marshmallow, arrow) are asked in English only: the English side of
the comparison on code no change was tuned on. Rows
(``--rows`` picks some):

- ``en full`` / ``zh full``: the engine as shipped;
- ``zh full, no glossary``: the Chinese question with no English rendering (the models read the
  Chinese, BM25 gets its segmented words only): what the glossary adds;
- ``zh full, no multilingual``: without the multilingual scorer (``search/multilingual.py``):
  what it adds;
- ``zh bm25``: BM25 alone, with the glossary's English terms;
- ``zh bm25 reference``: BM25 alone on the segmented Chinese question (no glossary): the
  segmented-BM25 reference the issue asks for.

Every row reports MRR@10, chunk@10 (the shared metrics, ``evaluate.score_case``) and the
refusal pair: refused-while-right (flagged insufficient although the first file is gold) and
accepted-while-wrong (not flagged although it is not). Each case's record also carries what
the verdict read (its signals, confidence, quoted-phrase refusal), so
``confidence_fit.py --chinese`` fits on the Chinese questions too, and its first ten results
(``path:start-end:symbol``), so two runs compare case by case. ``--segmenter`` picks how
Chinese is cut (``index/cjk.py``); each segmenter gets its own index folders.

  PYTHONPATH=server python bench/chinese.py --shared /work/shared/bench --index-root /tmp/zh-idx
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from common import BENCH, DEFAULT_SHARED, log, result_path, stamp  # first: server/ on sys.path

# isort: split
from code_evidence import config
from code_evidence.api import Depth, FindRequest
from code_evidence.engine import Engine
from code_evidence.evaluation.evaluate import CONFIGS, LIMIT, Case, Hit, configured, score_case
from code_evidence.index import cjk
from code_evidence.search import crosslingual, multilingual, verdict
from code_evidence.search import query as query_analysis
from devset import DEFAULT_WS, ensure_workspace, load_cases, load_manifest
from doc_translation import EN_DOCS, materialize_english, translation_path
from docstring_sets import PACKAGES as DOCUMENTED_PACKAGES
from docstring_sets import dataset_name as documented_dataset_name
from docstring_sets import language as documented_language
from docstring_sets import load_cases as load_documented_cases
from docstring_sets import materialize as materialize_documented

ZH_DIR = BENCH / "zh"
ENGLISH_DOCUMENTED = ("flask-3.1.0-docstrings", "click-8.3.0-docstrings")
# docstring_sets.py's packages: those documented in Chinese have questions in Chinese only, the
# English held-out ones in English only.
CHINESE_DOCUMENTED = {
    documented_dataset_name(p): p for p in DOCUMENTED_PACKAGES if documented_language(p) == "zh"
}
ENGLISH_HELD_OUT = {
    documented_dataset_name(p): p for p in DOCUMENTED_PACKAGES if documented_language(p) == "en"
}
# pypinyin (9 cases) stays buildable but is not a set: too few cases.
CHINESE_DOCUMENTED.pop(documented_dataset_name("pypinyin"))
PACKAGE_SETS = {**CHINESE_DOCUMENTED, **ENGLISH_HELD_OUT}
# The same Chinese-documented code documented in English by the team (``doc_translation.py``),
# where a translation exists: its cases, asked in both languages, on the twin workspace.
ENGLISH_DOCS = {
    name + EN_DOCS: package
    for name, package in CHINESE_DOCUMENTED.items()
    if translation_path(package).is_file()
}
DATASETS = (*ENGLISH_DOCUMENTED, *CHINESE_DOCUMENTED, *ENGLISH_HELD_OUT, *ENGLISH_DOCS)


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    language: str  # "en" | "zh"
    config: str  # a CONFIGS key
    glossary: bool = True
    multilingual: bool = True


ROWS = (
    Row("en full", "en", "full"),
    Row("zh full", "zh", "full"),
    Row("zh full, no glossary", "zh", "full", glossary=False),
    Row("zh full, no multilingual", "zh", "full", multilingual=False),
    Row("zh bm25", "zh", "bm25"),
    Row("zh bm25 reference", "zh", "bm25", glossary=False),
)


def _queries(path: Path) -> dict[str, str]:
    """case id -> question, from a JSONL file of translated questions."""
    with open(path, encoding="utf-8") as f:
        return {d["id"]: d["query"] for d in map(json.loads, f) if d}


def chinese_queries(dataset: str) -> dict[str, str]:
    return _queries(ZH_DIR / f"{dataset}.zh.jsonl")


def english_twins(dataset: str) -> dict[str, str]:
    """A Chinese-documented set's questions translated into English by the team, where
    ``bench/zh/<dataset>.en.jsonl`` exists (see its README): the same code and gold asked in
    English, so the cost of asking in Chinese is measured apart from the package's difficulty."""
    path = ZH_DIR / f"{dataset}.en.jsonl"
    return _queries(path) if path.is_file() else {}


@contextlib.contextmanager
def without_glossary() -> Iterator[None]:
    """No English rendering: the question is analysed as its own text (Chinese words only)."""
    saved = crosslingual.render
    crosslingual.render = lambda raw, g=None: None  # type: ignore[assignment]
    try:
        yield
    finally:
        crosslingual.render = saved


@contextlib.contextmanager
def without_multilingual() -> Iterator[None]:
    """No multilingual scorer: the ranking as it was before it."""
    saved = multilingual.rerankers
    multilingual.rerankers = lambda qa, enabled, notes: []  # type: ignore[assignment]
    try:
        yield
    finally:
        multilingual.rerankers = saved


def ask(eng: Engine, case: Case, query: str, depth: Depth) -> tuple[dict[str, float], dict]:
    """The case's metrics, and what the verdict read (its signals, the confidence and whether
    the quoted-phrase rule refused), recorded as ``evaluate.run_case`` does so that
    ``confidence_fit.py --chinese`` can fit on these answers too."""
    res = eng.find(FindRequest(query=query, limit=LIMIT, depth=depth), refresh=False)
    m = score_case(case, [Hit(e.path, int(e.start), int(e.end)) for e in res.results])
    right = bool(res.results) and res.results[0].path in case.gold
    m["refused_right"] = float(res.insufficient and right)
    m["accepted_wrong"] = float(not res.insufficient and not right)
    m["insufficient"] = float(res.insufficient)
    judged: dict = {
        "confidence": res.confidence,
        "results": [f"{e.path}:{e.start}-{e.end}:{e.symbol}" for e in res.results[:10]],
    }
    if res.results:
        judged["signals"] = verdict.signals(
            query_analysis.analyze(query),
            None,
            res.results[: verdict.TOP],
            eng.parts.lexical.view().doc_freq,
        )
        judged["refused_by_rule"] = (res.insufficient_reason or "").startswith("no result")
    return m, judged


def mean(rows: list[dict[str, float]], key: str) -> float | None:
    vals = [r[key] for r in rows if key in r]
    return sum(vals) / len(vals) if vals else None


def package_cases(name: str, limit: int | None) -> list[Case]:
    """A package set's cases (``docstring_sets.py``) as the scorer reads them."""
    out = []
    for c in load_documented_cases(PACKAGE_SETS[name])[:limit]:
        gold = {g["path"]: tuple((int(a), int(b)) for a, b in g["ranges"]) for g in c["gold"]}
        out.append(Case(c["id"], name, "docstring", "a", c["query"], None, gold))
    return out


def run(args: argparse.Namespace) -> dict:
    cjk.SEGMENTER = args.segmenter
    shared = Path(args.shared)
    manifest = {d["name"]: d for d in load_manifest(shared)}
    per_row: dict[tuple[str, str], list[dict[str, float]]] = {}
    per_case: list[dict] = []
    for name in args.dataset or DATASETS:
        twins: dict[str, str] = {}
        base = name.removesuffix(EN_DOCS)
        if base in PACKAGE_SETS:
            cases = package_cases(base, args.cases_limit)
            zh = {c.id: c.query for c in cases}  # a Chinese-documented set's own questions
            twins = english_twins(base)
            if twins:  # its English rows ask the translations
                cases = [replace(c, query=twins[c.id]) for c in cases if c.id in twins]
            if name in ENGLISH_DOCS:
                ws = materialize_english(ENGLISH_DOCS[name])
            else:
                ws = materialize_documented(PACKAGE_SETS[name])
        else:
            cases = load_cases(shared, manifest[name], args.cases_limit)
            zh = chinese_queries(name)
            ws = ensure_workspace(shared, Path(args.ws), manifest[name], history=False)
        group = name.split("-")[0] if base in PACKAGE_SETS else "English-documented"
        if name in ENGLISH_DOCS:
            group += ", documented in English"
        index_dir = Path(args.index_root) / args.segmenter / name
        index_dir.mkdir(parents=True, exist_ok=True)
        with Engine(ws, index_dir=index_dir, config=config.Config()) as eng:
            eng.index()
            log(f"{name}: indexed ({args.segmenter})")
            for row in ROWS:
                if args.rows and row.name not in args.rows:
                    continue
                if row.language == "en" and base in CHINESE_DOCUMENTED and not twins:
                    continue  # its questions exist in Chinese only
                if row.language == "zh" and name in ENGLISH_HELD_OUT:
                    continue  # and these in English only
                with configured(eng, CONFIGS[row.config]):
                    guard = contextlib.nullcontext() if row.glossary else without_glossary()
                    plain = contextlib.nullcontext() if row.multilingual else without_multilingual()
                    with guard, plain:
                        for c in cases:
                            q = c.query if row.language == "en" else zh[c.id]
                            m, judged = ask(eng, c, q, args.depth)
                            per_row.setdefault((group, row.name), []).append(m)
                            per_case.append(
                                {
                                    "row": row.name,
                                    "id": c.id,
                                    "dataset": name,
                                    "query": q,
                                    **m,
                                    **judged,
                                }
                            )
                log(f"  {name} [{row.name}] done")
    keys = ("MRR@10", "chunk@10", "refused_right", "accepted_wrong", "insufficient")
    table = {
        f"{group}: {row}": {"n": len(ms), **{k: mean(ms, k) for k in keys}}
        for (group, row), ms in per_row.items()
    }
    return {
        "kind": "chinese",
        "stamp": stamp(),
        "segmenter": args.segmenter,
        "depth": args.depth,
        "datasets": args.dataset or list(DATASETS),
        "table": table,
        "cases": per_case,
    }


def print_table(out: dict) -> None:
    datasets = ", ".join(out["datasets"])
    print(f"segmenter: {out['segmenter']}   depth: {out['depth']}   datasets: {datasets}")
    print(f"{'row':<44}{'n':>5}{'MRR@10':>9}{'chunk@10':>10}{'refused-right':>15}"
          f"{'accepted-wrong':>16}{'flagged':>9}")  # fmt: skip
    for name, t in out["table"].items():
        print(
            f"{name:<44}{t['n']:>5}{t['MRR@10']:>9.3f}{t['chunk@10']:>10.3f}"
            f"{t['refused_right']:>15.3f}{t['accepted_wrong']:>16.3f}{t['insufficient']:>9.3f}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    ap.add_argument("--ws", type=Path, default=DEFAULT_WS["sdist"])
    ap.add_argument("--index-root", type=Path, required=True)
    ap.add_argument("--dataset", action="append", choices=DATASETS)
    ap.add_argument("--segmenter", choices=cjk.SEGMENTERS, default=cjk.SEGMENTER)
    ap.add_argument("--cases-limit", type=int)
    ap.add_argument(
        "--rows",
        action="append",
        choices=[r.name for r in ROWS],
        help="run only these rows (repeatable); default: every row",
    )
    ap.add_argument(
        "--depth",
        choices=("deep", "interactive"),
        default="deep",
        help="deep (the CLI's and agents' default) lets the cross-encoder read the whole head "
        "with no time limit, so the rows are reproducible; interactive is cut by the clock",
    )
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    out = run(args)
    print_table(out)
    path = args.out or result_path("chinese")
    path.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
