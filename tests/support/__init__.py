"""Helpers shared by the test modules (not tests themselves): ``project`` (the shop project
and git), ``lsp`` (the language server under pytest-lsp), ``history`` (a generated git
history), ``net_guard`` (run the CLI with the network refused). The crash-injection helpers
live in ``bench/`` (``bench.crash``), because ``bench/stress.py`` runs them too."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository
