"""``code-evidence``: index, find, status (and the servers: ``serve``, ``mcp``). A thin shell
over :class:`Engine`.

Exit codes: 0 success, 2 bad input or configuration (the message says what to fix), 1 anything
unexpected. Machine output (``--json``, ``--batch``) goes to stdout; progress and messages go to
stderr so they never corrupt it. Human output shows file names and text from the repository
with their control characters escaped (:func:`printable`): a carriage return in a file name
must not overwrite the rank column, an escape sequence must not drive the terminal.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .api import FindRequest, FindResult, Status, to_json_dict
from .config import TUNED_FILE, ConfigError, load_config, read_tuned
from .engine import Engine, EngineError, shared_embedder
from .git import Git
from .paths import default_index_dir
from .search.explain import explain

# C0 and C1 controls, and the bidirectional overrides that reorder what a terminal shows.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str, lines: bool = False) -> str:
    """``text`` with every control character as a visible escape (``\\r``, ``\\x1b``);
    ``lines``: a block of text whose line breaks and tabs are kept."""

    def escape(m: re.Match[str]) -> str:
        c = m.group()
        if lines and c in "\n\t":
            return c
        named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c)
        return named or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")

    return _CONTROL.sub(escape, text)


def say(text: str) -> None:
    """Print human output: repository text escaped, line breaks kept."""
    print(printable(text, lines=True))


DEFAULT_COMMITS = 1000
DEFAULT_MAX_CASES = 200
INTENTS = ("auto", "find-file", "explain", "fix-failure", "verify")


class ProgressBar:
    """A one-line bar on stderr when it is a terminal; a few plain lines otherwise."""

    def __init__(self, stream: TextIO = sys.stderr, enabled: bool = True) -> None:
        self.stream = stream
        self.enabled = enabled
        self.tty = stream.isatty()
        self._last = 0.0
        self._stage = ""

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        final = done >= total
        if stage == self._stage and not final and now - self._last < (0.1 if self.tty else 5):
            return
        self._stage, self._last = stage, now
        pct = 100 * done / total if total else 100.0
        if self.tty:
            filled = int(pct / 100 * 30)
            bar = "#" * filled + "-" * (30 - filled)
            self.stream.write(f"\r{stage:<8} [{bar}] {done}/{total} {pct:5.1f}%")
            if final:
                self.stream.write("\n")
        else:
            self.stream.write(f"{stage}: {done}/{total} ({pct:.0f}%)\n")
        self.stream.flush()


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workspace", default=".", help="folder to index (default: current folder)")
    p.add_argument("--index-dir", default=None, help="index folder (default: per-user cache)")
    p.add_argument(
        "--trust-other-owner",
        action="store_true",
        help="run git in the workspace even though another user owns its repository (by "
        "default such a repository is indexed as a plain folder); settings in it that name "
        "programs stay disabled either way",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="code-evidence", description="Find the code evidence for a question."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_index = sub.add_parser("index", help="build or update the index of a workspace")
    _common(p_index)
    p_index.add_argument("--quiet", action="store_true", help="no progress output")
    p_index.add_argument("--json", action="store_true", help="print the report as JSON")
    # `ray`: a local instance; the chunk texts travel to the workers (docs/cluster.md).
    p_index.add_argument("--cluster", metavar="ray[://ADDRESS]", help="embed on Ray workers")
    p_index.add_argument(
        "--cluster-actors", type=int, help="Ray embedding actors (default: one per CPU and GPU)"
    )

    p_cache = sub.add_parser("cache", help="export or import a workspace's embeddings")
    _common(p_cache)
    p_cache.add_argument("action", choices=["export", "import"])
    p_cache.add_argument("file", help="the cache file to write (export) or read (import)")

    p_find = sub.add_parser("find", help="answer a question with ranked, cited evidence")
    _common(p_find)
    p_find.add_argument("query", nargs="?", help="the question, identifiers, or pasted error")
    p_find.add_argument("--open-file", help="the file the user has open (workspace-relative)")
    p_find.add_argument("--line", type=int, help="1-based cursor line in --open-file")
    p_find.add_argument("--limit", type=int, default=10, help="ranked results (default 10)")
    p_find.add_argument("--budget", type=int, help="context token budget")
    p_find.add_argument("--intent", choices=INTENTS, default="auto")
    p_find.add_argument(
        "--deep",
        action="store_true",
        help="let the cross-encoder score more candidates, with no time limit",
    )
    p_find.add_argument("--json", action="store_true", help="print one JSON object")
    p_find.add_argument(
        "--explain",
        action="store_true",
        help="show each result's rank per channel, fusion, features and rerank",
    )
    p_find.add_argument(
        "--as-of", metavar="REF", help="answer from the code at this git revision, not the tree"
    )
    p_find.add_argument("--batch", help="JSONL file of {id, query, open_file?, line?}")
    p_find.add_argument("--quiet", action="store_true", help="no progress output")

    p_status = sub.add_parser("status", help="how fresh the index is")
    _common(p_status)
    p_status.add_argument("--json", action="store_true")

    for name, text in (
        ("eval", "measure answers on questions mined from this repository's git history"),
        ("tune", "fit the ranking settings to this repository's history and store them"),
    ):
        p = sub.add_parser(name, help=text)
        _common(p)
        p.add_argument(
            "--commits",
            type=int,
            default=DEFAULT_COMMITS,
            metavar="N",
            help=f"read the newest N commits (default {DEFAULT_COMMITS}; 0: all)",
        )
        p.add_argument("--since", metavar="REF", help="only commits after this revision")
        p.add_argument(
            "--max-cases",
            type=int,
            default=DEFAULT_MAX_CASES,
            metavar="N",
            help=f"ask at most N commits, evenly spaced in time (default {DEFAULT_MAX_CASES})",
        )
        p.add_argument("--json", action="store_true", help="print the report as JSON")
        p.add_argument("--out", help="also write the JSON report to this file")
        p.add_argument("--quiet", action="store_true", help="no progress output")
        if name == "eval":
            p.add_argument(
                "--configs",
                type=lambda v: v.split(","),
                help="stage configurations, comma-separated (default: the stage ablation; "
                "'--configs help' lists them)",
            )
        else:
            p.add_argument(
                "--dry-run", action="store_true", help="report, but do not store the settings"
            )
            p.add_argument(
                "--reset", action="store_true", help="forget stored settings: back to defaults"
            )

    p_serve = sub.add_parser("serve", help="run the language server over stdio (for editors)")
    p_serve.add_argument(
        "--index-dir", default=None, help="index folder (default: per-user cache, per folder)"
    )

    p_mcp = sub.add_parser(
        "mcp", help="run the MCP server over stdio (for coding agents; docs/agents.md)"
    )
    _common(p_mcp)
    p_mcp.add_argument(
        "--index-wait",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="how long a question waits for the index to take in recent changes (or, on an "
        "unindexed workspace, for lexical readiness) before answering from what exists "
        "(default 30)",
    )
    return parser


MCP_INSTALL = "pip install 'code-evidence[mcp]'"


def _cmd_mcp(args: argparse.Namespace) -> int:
    """The MCP SDK is an optional extra: without it, say exactly how to add it."""
    try:
        from .mcp.server import serve
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] not in ("mcp", "mcp_types"):
            raise
        print(
            "code-evidence: error: `code-evidence mcp` needs the MCP SDK, which is not "
            f"installed. Install it with:\n  {MCP_INSTALL}\n(from a checkout of this "
            "repository: pip install -e '.[mcp]')",
            file=sys.stderr,
        )
        return 2
    if args.index_wait < 0:
        raise EngineError("--index-wait must be 0 or more seconds")
    return serve(args.workspace, args.index_dir, args.trust_other_owner, args.index_wait)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":  # the workspace comes from the editor, not the command line
        from .lsp.app import serve

        return serve(args.index_dir)
    try:
        if args.command == "mcp":
            return _cmd_mcp(args)
        if args.command in ("eval", "tune"):
            return _cmd_history(args)
        if args.command == "cache":
            return _cmd_cache(args)
        with Engine(
            Path(args.workspace), args.index_dir, trust_other_owner=args.trust_other_owner
        ) as engine:
            for note in engine.notes:
                print(f"note: {printable(note)}", file=sys.stderr)
            if args.command == "index":
                return _cmd_index(engine, args)
            if args.command == "find":
                return _cmd_find(engine, args)
            return _cmd_status(engine, args)
    except (EngineError, ConfigError) as exc:
        print(f"code-evidence: error: {printable(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("code-evidence: interrupted; the index keeps what was committed", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `code-evidence find ... | head`: the reader left, not an error
        sys.stderr.close()
        return 0


def _cmd_history(args: argparse.Namespace) -> int:
    """``eval`` and ``tune``: both mine the history and replay it in a private copy; neither
    opens, changes or locks the workspace's own index. The evaluation code is imported here,
    not at start: ``find`` and ``index`` never need it."""
    from .evaluation.backtest import DEFAULT_CONFIGS, evaluate_history, mine_cases, render_report
    from .evaluation.evaluate import CONFIGS
    from .evaluation.tune import render_tune, store, tune

    if getattr(args, "configs", None) == ["help"]:
        print(f"default: {','.join(DEFAULT_CONFIGS)}\nknown:   {','.join(CONFIGS)}")
        return 0
    workspace = Path(args.workspace).expanduser()
    if not workspace.is_dir():
        raise EngineError(f"workspace is not a folder: {workspace}")
    index_dir = Path(args.index_dir) if args.index_dir else default_index_dir(workspace)
    if args.commits < 0:
        raise EngineError("--commits must be 0 (all) or more")
    if args.max_cases < 1:
        raise EngineError("--max-cases must be at least 1")
    if args.command == "tune" and args.reset:
        (index_dir / TUNED_FILE).unlink(missing_ok=True)
        print("tuned settings removed: ranking uses the defaults")
        return 0
    bar = ProgressBar(enabled=not args.quiet)
    git = Git(workspace, args.trust_other_owner)
    if git.refusal:
        raise EngineError(git.refusal)
    history = mine_cases(workspace, args.commits or None, args.since, bar, args.max_cases, git=git)
    if args.command == "eval":
        configs = args.configs or list(DEFAULT_CONFIGS)
        unknown = [c for c in configs if c not in CONFIGS]
        if unknown:
            raise EngineError(f"unknown configuration {unknown[0]!r}; known: {', '.join(CONFIGS)}")
        tuned = read_tuned(index_dir)
        config = load_config(workspace.resolve(), tuned.get("ranking"))
        report = evaluate_history(history, config, configs, bar)
        report["ranking"] = "tuned" if tuned else "defaults"
        text = render_report(report)
    else:
        report = tune(history, load_config(workspace.resolve()), bar)  # fitted from defaults
        text = render_tune(report)
        if report["ranking"] and not args.dry_run:
            text += f"\nstored in {store(index_dir, report)}"
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(report))
    else:
        say(text)
    return 0


def _cmd_index(engine: Engine, args: argparse.Namespace) -> int:
    bar = ProgressBar(enabled=not args.quiet)
    if args.cluster_actors is not None and not args.cluster:
        raise EngineError("--cluster-actors needs --cluster")
    if args.cluster:  # Ray is imported only here (models/cluster.py)
        from .models.cluster import ClusterError, cluster_pool

        try:
            with cluster_pool(args.cluster, engine.embedder.model_id, args.cluster_actors) as pool:
                report = engine.index(progress=bar, pool=pool)
                stats = pool.stats
        except ClusterError as exc:
            raise EngineError(str(exc)) from exc
        print(f"cluster: {stats.summary()}", file=sys.stderr)
    else:
        report = engine.index(progress=bar)
    if args.json:
        print(json.dumps(to_json_dict(report)))
        return 0
    if report.read_only and not engine.locked_by_other:
        raise EngineError(
            f"the index in {engine.index_dir} cannot be written (see the note above); free some "
            "space or put the index elsewhere (--index-dir, CODE_EVIDENCE_CACHE_DIR)"
        )
    if report.read_only:
        print("another process holds the writer lock; the index was not updated", file=sys.stderr)
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(report.skipped.items())) or "none"
    say(
        f"indexed {engine.workspace}: {report.files_seen} files ({report.files_changed} changed, "
        f"{report.files_removed} removed), {report.chunks_total} chunks "
        f"(+{report.chunks_added} -{report.chunks_removed}), embedded {report.embedded} "
        f"({report.vectors_from_cache} from cache) in {report.ms / 1000:.1f}s; skipped: {skipped}"
    )
    return 0


def _cmd_cache(args: argparse.Namespace) -> int:
    """Export a workspace's cached vectors (from its index), or import a file into the
    per-user embedding cache (no workspace involved)."""
    from .models import embed_transfer

    path = Path(args.file)
    if args.action == "export":
        ws, trust = Path(args.workspace), args.trust_other_owner
        with Engine(ws, args.index_dir, trust_other_owner=trust) as eng:
            model = eng.embedder.model_id
            out = embed_transfer.export_file(path, eng.embedding_texts(), eng.cache, model)
        say(f"exported {out.entries} vectors to {path}; {out.not_embedded} texts not embedded yet")
        return 0
    with embed_transfer.EmbeddingCache() as cache:
        try:
            got = embed_transfer.import_file(path, cache, shared_embedder())
        except embed_transfer.CacheFileError as exc:
            raise EngineError(f"import refused: {exc}") from exc
    say(f"imported {got.entries} vectors ({got.new} new), sample cosine >= {got.min_cosine:.4f}")
    return 0


def _request(query: str, args: Any, open_file: str | None, line: int | None) -> FindRequest:
    return FindRequest(
        query=query,
        open_file=open_file,
        line=line,
        limit=args.limit,
        budget_tokens=args.budget,
        intent=args.intent,
        depth="deep" if args.deep else "interactive",
    )


def _cmd_find(engine: Engine, args: argparse.Namespace) -> int:
    if args.batch:
        return _cmd_batch(engine, args)
    if args.query is None:
        raise EngineError("give a query, or --batch FILE")
    if args.line is not None and not args.open_file:
        raise EngineError("--line needs --open-file")
    req = _request(args.query, args, args.open_file, args.line)
    if args.as_of:
        result = engine.find_as_of(req, args.as_of)
    else:
        _, notes = engine.refresh(ProgressBar(enabled=not args.quiet and not args.json))
        result = engine.find(req, refresh=False)
        result.notes.extend(notes)
    if args.json:
        data = to_json_dict(result)
        if args.explain:
            data["explain"] = explain(result)
        print(json.dumps(data))
    else:
        print(render(result))
        if args.explain:
            print("--- explain ---")
            print("\n".join(printable(line) for line in explain(result)))
    return 0


def _cmd_batch(engine: Engine, args: argparse.Namespace) -> int:
    """One JSON object per input line, in order; a failing line gives {id, error} and the
    batch goes on. The index is refreshed once, models load once."""
    path = Path(args.batch)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise EngineError(f"cannot read batch file {path}: {exc}") from exc
    _, notes = engine.refresh(ProgressBar(enabled=not args.quiet))
    for note in notes:
        print(f"note: {printable(note)}", file=sys.stderr)
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        item_id: Any = None
        try:
            item = json.loads(line)
            if not isinstance(item, dict):
                raise EngineError("each line must be a JSON object")
            item_id = item.get("id", n)
            query = item.get("query")
            if not isinstance(query, str):
                raise EngineError("'query' must be a string")
            req = _request(query, args, item.get("open_file"), item.get("line"))
            out = {"id": item_id, **to_json_dict(engine.find(req, refresh=False))}
        except (EngineError, ValueError, TypeError, RecursionError) as exc:
            out = {"id": item_id if item_id is not None else n, "error": str(exc)}
        except Exception as exc:  # a bug on one line must not cost the others their answers
            out = {"id": item_id if item_id is not None else n, "error": f"internal error: {exc!r}"}
        print(json.dumps(out), flush=True)
    return 0


def _cmd_status(engine: Engine, args: argparse.Namespace) -> int:
    status = engine.status()
    if args.json:
        print(json.dumps(to_json_dict(status)))
    else:
        print(render_status(status))
    return 0


def render(result: FindResult) -> str:
    """The answer for a person; every line of it from the repository escaped (``printable``)."""
    p = printable
    lines = []
    where = f"{p(result.branch or '-')}@{(result.commit or '-')[:10]}"
    lines.append(f"query: {p(result.query)}   [{result.intent}]   index: {where}")
    for note in result.notes:
        lines.append(f"note: {p(note)}")
    if not result.results:
        lines.append("no results")
    for i, r in enumerate(result.results, 1):
        loc = f"{p(r.path)}:{r.start}-{r.end}"
        lines.append(
            f"{i:>2}. {loc:<48} {p(r.symbol) or '-':<32} {r.score:.4f}  {p(', '.join(r.reasons))}"
        )
    verdict = f"confidence {result.confidence:.2f}"
    if result.insufficient:
        verdict += f" — insufficient evidence: {p(result.insufficient_reason or '')}"
    lines.append(verdict)
    ctx = result.context
    lines.append(f"--- context ({ctx.tokens}/{ctx.budget} tokens, {len(ctx.dropped)} dropped) ---")
    lines.append(printable(ctx.text, lines=True))
    return "\n".join(lines)


def render_status(s: Status) -> str:
    fresh = "up to date" if s.pending == 0 else f"{s.pending} files pending"
    rows = [
        ("workspace", s.workspace),
        ("index", s.index_dir),
        ("commit", f"{s.commit or '-'} ({s.branch or 'no branch'}){' dirty' if s.dirty else ''}"),
        ("indexed", f"{s.indexed_commit or '-'} at {s.indexed_at or 'never'} — {fresh}"),
        ("files", str(s.files)),
        ("chunks", f"{s.chunks} ({s.vectors} with vectors)"),
        ("size", f"{s.index_bytes / 1e6:.1f} MB"),
        ("model", s.model or "-"),
        ("ranking", s.ranking),
        ("writer", "another process" if s.locked_by_other else "this process"),
    ]
    return "\n".join(f"{k:<10} {printable(v)}" for k, v in rows)


if __name__ == "__main__":
    sys.exit(main())
