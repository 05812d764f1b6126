"""Mine (query, code) training groups from the allowlisted sources only.

Sources are pinned in ``sources.json``: the CPython standard library of the interpreter that
runs this script, and sdists from PyPI verified by sha256. Nothing else is read (site-packages
hold projects that are used to check this work; a leak would make every quality number
meaningless), and nothing of ``../shared/bench``. With ``--other-languages`` also the C, C++,
PHP and Ruby sources of ``mine_syntax.py``.

Each group is one query, one positive function and ``NEGATIVES`` negatives: functions of the same
file, of the same package folder and BM25 neighbours in the same project (the hard ones), and
random ones. Queries come in three styles: a docstring's first sentence (the positive's
docstring is then removed, and half of the negatives lose theirs too; with ``--doc-rest`` the
positive keeps the docstring less its first paragraph half the time, so that carrying
documentation is not a sign of a negative either), the function's own name split into words,
and commit-message-like imperative sentences made from the code's own names.

Output: ``data/pairs.npz`` (token ids, pre-tokenised with the shipped tokenizer so training
needs no tokenizer) and ``data/manifest.json`` (sources, versions, hashes, counts).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import re
import sys
import sysconfig
import tarfile
import tempfile
import urllib.request
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "server"))
from code_evidence.models.passage import passage_text  # noqa: E402

TOKENIZER = HERE.parent / "server" / "code_evidence" / "models" / "minilm" / "tokenizer.json"
NEGATIVES = 7
MAX_CODE_LINES = 60
STORE_TOKENS = 256
SEED = 13
SKIP_PARTS = {"tests", "test", "testing", "benchmarks", "doc", "docs", "examples", "idle_test"}
BENCH_PROJECTS = (  # ../shared/bench: never training data
    "flask", "click", "fastify", "zod", "gin", "bytes", "javapoet", "tushare",
)  # fmt: skip
# Code other projects wrote, copied into an sdist (meson in numpy, array-api-compat in scipy):
# another licence and another project, so not ours to train on.
VENDORED = ("vendor", "extern", "third_party", "subprojects", "array_api_compat", "array_api_extra")


@dataclass(slots=True)
class Function:
    project: str
    path: str
    qualname: str
    name: str
    params: list[str]
    code: str  # with its docstring
    bare: str | None  # without its docstring (None when it has none)
    summary: str | None  # docstring's first sentence, cleaned
    # With its docstring less the first paragraph (the query's source): None when nothing of
    # the docstring is left. A doc-style group's positive is this half the time, so that
    # carrying documentation is no sign of a negative (the code a user asks about at run time
    # usually has its doc comment).
    rest: str | None = None


# ---------------------------------------------------------------- sources


def fetch_sdists(sources: dict, dest: Path) -> list[Path]:
    """Download each pinned sdist once and check its sha256; a mismatch is fatal."""
    dest.mkdir(parents=True, exist_ok=True)
    paths = []
    for s in sources["sdists"]:
        if s["name"] in BENCH_PROJECTS:
            raise SystemExit(f"{s['name']} is a benchmark project: not allowed as training data")
        path = dest / s["file"]
        if not path.exists():
            req = urllib.request.Request(
                f"https://pypi.org/simple/{s['name']}/",
                headers={"Accept": "application/vnd.pypi.simple.v1+json"},
            )
            with urllib.request.urlopen(req, timeout=60) as resp:
                files = json.load(resp)["files"]
            url = next(f["url"] for f in files if f["filename"] == s["file"])
            print(f"fetch {s['file']}", file=sys.stderr)
            with (
                urllib.request.urlopen(url, timeout=600) as resp,
                tempfile.NamedTemporaryFile(dir=dest, delete=False) as tmp,
            ):
                tmp.write(resp.read())
            Path(tmp.name).replace(path)
        paths.append(check_pinned(path, s))
    return paths


def check_pinned(path: Path, spec: dict) -> Path:
    """``path`` when its sha256 is the one ``spec`` pins; otherwise it is deleted (a next run
    fetches it again) and the run stops."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != spec["sha256"]:
        path.unlink()
        raise SystemExit(f"{spec['file']}: sha256 {digest} is not the pinned {spec['sha256']}")
    return path


def _skip(rel: str) -> bool:
    parts = rel.split("/")
    name = parts[-1]
    return (
        not name.endswith(".py")
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or "site-packages" in parts
        or any(p in SKIP_PARTS for p in parts[:-1])
        or any(v in p for p in parts[:-1] for v in VENDORED)
    )


def stdlib_files() -> Iterator[tuple[str, bytes]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if not _skip(rel):
            yield rel, path.read_bytes()


def sdist_files(path: Path) -> Iterator[tuple[str, bytes]]:
    with tarfile.open(path) as tar:
        for m in tar:
            rel = m.name.split("/", 1)[-1]
            if m.isfile() and not _skip(rel):
                f = tar.extractfile(m)
                if f is not None:
                    yield rel, f.read()


# ---------------------------------------------------------------- functions

_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_TICKS = re.compile(r"`+([^`]+)`+")


def summary_of(doc: str) -> str | None:
    """The first sentence, with reST roles and backticks reduced to their text."""
    para = doc.strip().split("\n\n", 1)[0]
    text = " ".join(para.split())
    text = _TICKS.sub(r"\1", _ROLE.sub(r"\1", text))
    m = re.search(r"(?<=[a-z0-9)])\.(\s|$)", text)
    if m:
        text = text[: m.start()]
    words = text.split()
    if len(words) < 3 or len(text) > 240 or text.lower().startswith(("deprecated", "alias")):
        return None
    return text


def functions_of(project: str, rel: str, data: bytes) -> Iterator[Function]:
    try:
        src = data.decode("utf-8")
        tree = ast.parse(src)
    except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return
    lines = src.splitlines()

    def visit(node: ast.AST, scope: list[str]) -> Iterator[Function]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from visit(child, [*scope, child.name])
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                fn = _function(project, rel, lines, child, scope)
                if fn is not None:
                    yield fn

    yield from visit(tree, [])


def _function(
    project: str,
    rel: str,
    lines: list[str],
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    scope: list[str],
) -> Function | None:
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
    end = node.end_lineno or node.lineno
    body = node.body
    doc = ast.get_docstring(node)
    has_doc = (
        doc is not None
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
    )
    code_lines = lines[start:end]
    bare_lines = rest_lines = None
    if has_doc:
        d0, d1 = body[0].lineno - 1, (body[0].end_lineno or body[0].lineno)
        bare_lines = lines[start:d0] + lines[d1:end]
        if len([ln for ln in bare_lines if ln.strip()]) < 3:
            return None  # a docstring and a pass: nothing to find but the docstring
        doc_lines = lines[d0:d1]
        blank = next((k for k, ln in enumerate(doc_lines) if k and not ln.strip()), None)
        if blank is not None and any(ln.strip(" \t\"'") for ln in doc_lines[blank:]):
            opener = doc_lines[0][: len(doc_lines[0]) - len(doc_lines[0].lstrip())] + '"""'
            rest_lines = [*lines[start:d0], opener, *doc_lines[blank + 1 :], *lines[d1:end]]
    elif end - start < 3:
        return None
    indent = len(code_lines[0]) - len(code_lines[0].lstrip())

    def text(ls: list[str]) -> str:
        return "\n".join(ln[indent:] if ln[:indent].isspace() else ln for ln in ls[:MAX_CODE_LINES])

    args = node.args
    params = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    return Function(
        project=project,
        path=rel,
        qualname=".".join([*scope, node.name]),
        name=node.name,
        params=[p for p in params if p not in ("self", "cls")],
        code=text(code_lines),
        bare=text(bare_lines) if bare_lines is not None else None,
        summary=summary_of(doc) if has_doc and doc else None,
        rest=text(rest_lines) if rest_lines is not None else None,
    )


# ---------------------------------------------------------------- queries

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
VERBS_FIX = ["Fix", "Handle", "Correct", "Guard against"]
TEMPLATES = [
    "{fix} {words} when {param} is None",
    "{fix} {words} for empty {param}",
    "Add a {param} option to {words}",
    "Make {words} accept {param} as a keyword",
    "Raise a clear error in {words} for an invalid {param}",
    "{fix} wrong result of {words}",
    "Speed up {words}",
    "Support {param} in {name}",
]


def words_of(name: str) -> str:
    return " ".join(w.lower() for w in _WORD.findall(name))


def ident_query(fn: Function, rng: random.Random) -> str | None:
    words = words_of(fn.qualname.replace(".", "_"))
    if len(words.split()) < 2:
        return None
    return fn.qualname if rng.random() < 0.3 else words


def commit_query(fn: Function, rng: random.Random) -> str | None:
    words = words_of(fn.name)
    if len(words.split()) < 2 and "." not in fn.qualname:
        return None
    if "." in fn.qualname:
        words = f"{words_of(fn.qualname.split('.')[-2])} {words}"
    param = words_of(rng.choice(fn.params)) if fn.params else "input"
    template = rng.choice(TEMPLATES)
    if "{param}" in template and not fn.params:
        template = TEMPLATES[5]
    return template.format(fix=rng.choice(VERBS_FIX), words=words, param=param, name=fn.name)


# ---------------------------------------------------------------- negatives


class Neighbours:
    """BM25 over one project's functions (Tantivy), for the hard negatives."""

    def __init__(self, fns: list[Function], ids: list[int]) -> None:
        import tantivy

        sb = tantivy.SchemaBuilder()
        sb.add_integer_field("id", stored=True, indexed=True)
        sb.add_text_field("body", stored=False)
        self.index = tantivy.Index(sb.build())
        w = self.index.writer(heap_size=200_000_000, num_threads=1)
        for i, fn in zip(ids, fns, strict=True):
            w.add_document(tantivy.Document(id=i, body=f"{fn.qualname} {fn.code}"))
        w.commit()
        self.index.reload()
        self.searcher = self.index.searcher()

    def near(self, query: str, k: int) -> list[int]:
        terms = [t.lower() for t in re.findall(r"[A-Za-z0-9]+", query) if len(t) > 1][:32]
        if not terms:
            return []
        q = self.index.parse_query(" ".join(terms), ["body"])
        hits = self.searcher.search(q, k).hits
        return [self.searcher.doc(addr)["id"][0] for _, addr in hits]


# ---------------------------------------------------------------- main


def collect(sources: dict, sdists: list[Path], debs: list[Path]) -> tuple[list[Function], dict]:
    import mine_syntax  # it builds on this module's Function

    fns: list[Function] = []
    manifest: dict = {"sources": []}
    std_hash = hashlib.sha256()
    for rel, data in stdlib_files():
        std_hash.update(rel.encode() + b"\0" + data)
        fns.extend(functions_of("cpython", rel, data))
    manifest["sources"].append(
        {
            **sources["stdlib"],
            "version": sys.version.split()[0],
            "files_sha256": std_hash.hexdigest(),
        }
    )
    for spec, path in zip(sources["sdists"], sdists, strict=True):
        for rel, data in sdist_files(path):
            fns.extend(functions_of(spec["name"], rel, data))
        if debs and spec.get("languages"):
            for rel, data in mine_syntax.sdist_syntax_files(path):
                fns.extend(mine_syntax.functions_of(spec["name"], rel, data))
        manifest["sources"].append(dict(spec))
    for spec, path in zip(sources.get("debs", []) if debs else [], debs, strict=True):
        for rel, data in mine_syntax.deb_files(path):
            fns.extend(mine_syntax.functions_of(spec["project"], rel, data))
        manifest["sources"].append(dict(spec))
    return fns, manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=HERE / "data")
    ap.add_argument("--val-share", type=float, default=0.03)
    ap.add_argument(
        "--other-languages",
        action="store_true",
        help="also C, C++, PHP and Ruby (mine_syntax.py; the second stage's data)",
    )
    ap.add_argument(
        "--doc-rest",
        action="store_true",
        help="a doc-style positive keeps its docstring less the first paragraph half the time",
    )
    args = ap.parse_args(argv)
    from tokenizers import Tokenizer

    rng = random.Random(SEED)
    sources = json.loads((HERE / "sources.json").read_text())
    sdists = fetch_sdists(sources, args.data / "sdists")
    import mine_syntax

    debs = (
        mine_syntax.fetch_debs(sources["debs"], args.data / "debs") if args.other_languages else []
    )
    fns, manifest = collect(sources, sdists, debs)
    # One entry per distinct code: re-exported or copied functions would be false negatives.
    seen: set[str] = set()
    uniq = []
    for fn in fns:
        key = hashlib.sha1(fn.code.encode()).hexdigest()
        if key not in seen:
            seen.add(key)
            uniq.append(fn)
    fns = uniq
    print(f"{len(fns)} functions", file=sys.stderr)

    # Passages: index 3*i is function i with its docstring, 3*i+1 without (or the same),
    # 3*i+2 with the docstring less its first paragraph (or without one).
    texts = []
    for fn in fns:
        bare = fn.bare if fn.bare is not None else fn.code
        texts.append(passage_text(fn.path, fn.qualname, fn.code))
        texts.append(passage_text(fn.path, fn.qualname, bare))
        texts.append(passage_text(fn.path, fn.qualname, fn.rest if fn.rest is not None else bare))

    by_file: dict[tuple[str, str], list[int]] = defaultdict(list)
    by_dir: dict[tuple[str, str], list[int]] = defaultdict(list)
    by_project: dict[str, list[int]] = defaultdict(list)
    for i, fn in enumerate(fns):
        by_file[(fn.project, fn.path)].append(i)
        by_dir[(fn.project, fn.path.rsplit("/", 1)[0] if "/" in fn.path else "")].append(i)
        by_project[fn.project].append(i)
    neighbours = {p: Neighbours([fns[i] for i in ids], ids) for p, ids in by_project.items()}

    def is_val(fn: Function) -> bool:
        h = hashlib.sha1(f"{fn.project}/{fn.path}".encode()).digest()
        return h[0] / 256 < args.val_share

    queries: list[str] = []
    rows: list[list[int]] = []  # [style, split, pos passage, neg passages...]
    other: list[bool] = []  # per row: the function is not Python (mine_syntax)
    styles = {"doc": 0, "ident": 1, "commit": 2}
    for i, fn in enumerate(fns):
        asks: list[tuple[str, str]] = []
        if fn.summary:
            asks.append(("doc", fn.summary))
        if rng.random() < (0.5 if fn.summary else 0.4):
            maker = ident_query if rng.random() < 0.4 else commit_query
            q = maker(fn, rng)
            if q:
                asks.append(("ident" if maker is ident_query else "commit", q))
        for style, q in asks:
            negs = _negatives(i, fn, fns, q, rng, by_file, by_dir, by_project, neighbours)
            if len(negs) < NEGATIVES:
                continue
            strip = style == "doc"
            pos = 3 * i
            if strip:
                keep = args.doc_rest and fn.rest is not None and rng.random() < 0.5
                pos = 3 * i + (2 if keep else 1)
            neg_ids = [3 * j + (1 if strip and rng.random() < 0.5 else 0) for j in negs]
            queries.append(q)
            rows.append([styles[style], int(is_val(fn)), pos, *neg_ids])
            other.append(not fn.path.endswith(".py"))

    tok = Tokenizer.from_file(str(TOKENIZER))
    tok.no_truncation()
    tok.no_padding()

    def encode(batch: list[str], limit: int) -> tuple[np.ndarray, np.ndarray]:
        enc = tok.encode_batch(batch, add_special_tokens=False)
        lens = np.array([min(len(e.ids), limit) for e in enc], dtype=np.int64)
        flat = np.concatenate([np.array(e.ids[:limit], dtype=np.uint16) for e in enc])
        return flat, np.concatenate([[0], np.cumsum(lens)])

    p_flat, p_off = encode(texts, STORE_TOKENS)
    q_flat, q_off = encode(queries, 64)
    table = np.array(rows, dtype=np.int32)
    args.data.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.data / "pairs.npz",
        p_flat=p_flat,
        p_off=p_off,
        q_flat=q_flat,
        q_off=q_off,
        rows=table,
        other=np.array(other, dtype=bool),
    )
    counts = {
        "functions": len(fns),
        "groups": len(rows),
        "negatives_per_group": NEGATIVES,
        "by_style": {s: int((table[:, 0] == k).sum()) for s, k in styles.items()},
        "validation_groups": int(table[:, 1].sum()),
        "other_language_groups": int(sum(other)),
        "by_project": {p: len(ids) for p, ids in by_project.items()},
    }
    manifest["counts"] = counts
    manifest["seed"] = SEED
    (args.data / "manifest.json").write_text(json.dumps(manifest, indent=1))
    with open(args.data / "queries.jsonl", "w") as f:  # for reading, not for training
        for q, r in zip(queries, rows, strict=True):
            f.write(
                json.dumps({"q": q, "style": r[0], "val": r[1], "pos": texts[r[2]][:300]}) + "\n"
            )
    print(json.dumps(counts, indent=1))
    return 0


def _negatives(
    i: int,
    fn: Function,
    fns: list[Function],
    query: str,
    rng: random.Random,
    by_file: dict,
    by_dir: dict,
    by_project: dict,
    neighbours: dict[str, Neighbours],
) -> list[int]:
    """Hard first: 3 BM25 neighbours, 2 of the same file, 1 of the same folder, then random."""

    def ok(j: int) -> bool:
        other = fns[j]
        return (
            j != i
            and j not in out
            and other.name != fn.name
            and (other.summary is None or other.summary != fn.summary)
        )

    out: list[int] = []

    def take(pool: list[int], n: int, shuffle: bool = True) -> None:
        pool = list(pool)
        if shuffle:
            rng.shuffle(pool)
        for j in pool:
            if len(out) >= NEGATIVES or n <= 0:
                return
            if ok(j):
                out.append(j)
                n -= 1

    near = neighbours[fn.project].near(query, 12)
    take(near[:12], 3, shuffle=False)
    take(by_file[(fn.project, fn.path)], 2)
    take(by_dir[(fn.project, fn.path.rsplit("/", 1)[0] if "/" in fn.path else "")], 1)
    project = by_project[fn.project]
    for _ in range(50):
        if len(out) >= NEGATIVES:
            break
        take([rng.choice(project)], 1, shuffle=False)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
