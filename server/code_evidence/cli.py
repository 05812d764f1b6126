"""``code-evidence``: index, find, status (and the servers: ``serve``, ``mcp``). A thin shell
over :class:`Engine`.

Exit codes: 0 success, 2 bad input or configuration (the message says what to fix), 1 anything
unexpected. Machine output (``--json``, ``--batch``) goes to stdout; progress and messages go to
stderr so they never corrupt it. What a person reads is built in ``cli_output.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .api import FindRequest, FindResult, check_line, to_json_dict
from .cli_args import build_parser, parse, workspace_from_folder
from .cli_output import (
    ProgressBar,
    empty_index_reason,
    printable,
    render,
    render_index,
    render_status,
)
from .config import TUNED_FILE, ConfigError, load_config, read_tuned
from .engine import Engine, EngineError, shared_embedder
from .git import Git
from .paths import default_index_dir, resolve_workspace_path
from .search.explain import explain


def say(text: str) -> None:
    """Print human output: repository text escaped, line breaks kept."""
    print(printable(text, lines=True))


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
    parser = build_parser()
    args = parse(parser, argv)
    workspace_from_folder(parser, args)
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
    bar.close()
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
    bar.close()
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
    say(render_index(str(engine.workspace), report))
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
    _check_editor_state(engine, args)
    req = _request(args.query, args, args.open_file, args.line)
    if args.as_of:
        result = engine.find_as_of(req, args.as_of)
    else:
        bar = ProgressBar(enabled=not args.quiet and not args.json)
        _, notes = engine.refresh(bar)
        bar.close()
        result = engine.find(req, refresh=False)
        result.notes.extend(notes)
        if not result.results:
            _say_why_empty(engine, result)
    if args.json:
        data = to_json_dict(result)
        if args.explain:
            data["explain"] = explain(result)
        print(json.dumps(data))
    else:
        print(render(result, quiet=args.quiet))
        if args.explain:
            print("--- explain ---")
            print("\n".join(printable(line) for line in explain(result)))
    return 0


def _check_editor_state(engine: Engine, args: argparse.Namespace) -> None:
    """``--open-file`` and ``--line`` name a real place, or the command stops (exit code 2)
    before any indexing: a typo must not quietly become an answer without the editor state.
    With ``--as-of`` the file is looked up at that revision by the engine instead."""
    if args.line is not None and not args.open_file:
        raise EngineError("--line needs --open-file")
    try:
        check_line(args.line)
    except EngineError as exc:
        raise EngineError(f"--line counts from 1: {exc}") from exc
    if args.open_file and not args.as_of:
        check_place(engine, args.open_file, args.line, "--open-file ", "--line ")


def check_place(
    engine: Engine, open_file: str, line: int | None, file_flag: str = "", line_flag: str = ""
) -> None:
    """The open file exists in the workspace and ``line`` is inside it; EngineError else."""
    try:
        full = engine.workspace / resolve_workspace_path(engine.workspace, open_file)
    except ValueError as exc:
        raise EngineError(str(exc)) from exc
    if not full.is_file():
        raise EngineError(f"{file_flag}{open_file}: no such file in {engine.workspace}")
    if isinstance(line, int) and not isinstance(line, bool):
        with full.open("rb") as f:
            count = sum(1 for _ in f)
        if line > max(count, 1):
            raise EngineError(
                f"{line_flag or 'line '}{line} is past the end of {open_file} ({count} lines)"
            )


def _say_why_empty(engine: Engine, result: FindResult) -> None:
    """An empty index answers nothing; say so and why instead of blaming the vectors."""
    why = empty_index_reason(engine.status())
    if why is None:
        return
    result.notes[:] = [n for n in result.notes if not n.startswith("vectors unavailable")]
    result.insufficient_reason = why


def _cmd_batch(engine: Engine, args: argparse.Namespace) -> int:
    """One JSON object per input line, in order; a failing line gives {id, error} and the
    batch goes on. The index is refreshed once, models load once."""
    path = Path(args.batch)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise EngineError(f"cannot read batch file {path}: {exc}") from exc
    bar = ProgressBar(enabled=not args.quiet)
    _, notes = engine.refresh(bar)
    bar.close()
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
            if isinstance(req.open_file, str):
                check_place(engine, req.open_file, req.line)
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


if __name__ == "__main__":
    sys.exit(main())
