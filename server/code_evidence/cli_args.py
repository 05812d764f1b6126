"""The command line's grammar: the commands and their options, and how an option a command
does not take is said (that command's usage, with the option meant). ``cli.py`` runs what
they ask for.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence
from pathlib import Path

DEFAULT_COMMITS = 1000
DEFAULT_MAX_CASES = 200
INTENTS = ("auto", "find-file", "explain", "fix-failure", "verify")


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


def _folder(p: argparse.ArgumentParser) -> None:
    """``code-evidence index ~/src/app``, as other tools take a folder; ``--workspace`` still
    works (``find`` takes the question as its argument, so it keeps the flag only)."""
    p.add_argument("folder", nargs="?", help="the workspace, instead of --workspace")


def workspace_from_folder(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    folder = getattr(args, "folder", None)
    if folder is None:
        return
    if args.workspace != "." and Path(args.workspace) != Path(folder):
        parser.error(f"two workspaces given: {folder} and --workspace {args.workspace}")
    args.workspace = folder


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="code-evidence", description="Find the code evidence for a question."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_index = sub.add_parser("index", help="build or update the index of a workspace")
    _common(p_index)
    _folder(p_index)
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
    _folder(p_status)
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


# Options people bring from other tools for the folder to search: what this one calls it.
_WORKSPACE_ALIASES = ("--root", "--repo", "--dir", "--directory", "--folder", "--path", "--cwd")


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments; an option the command does not take is an error of that command (its
    usage, not the top level's), with the option it may have meant."""
    args, extra = parser.parse_known_args(argv)
    if not extra:
        return args
    command = next(
        a.choices[args.command]
        for a in parser._actions
        if isinstance(a, argparse._SubParsersAction)
    )
    unknown = [e for e in extra if e.startswith("-")] or extra
    hints = []
    for option in unknown:
        name = option.split("=", 1)[0]
        if name in _WORKSPACE_ALIASES and "--workspace" in command._option_string_actions:
            hints.append(f"{name}: the folder to search is --workspace")
        else:
            close = difflib.get_close_matches(name, list(command._option_string_actions), n=1)
            hints.extend(f"{name}: did you mean {c}?" for c in close)
    hint = f" ({'; '.join(hints)})" if hints else ""
    command.error(f"unrecognized arguments: {' '.join(extra)}{hint}")
