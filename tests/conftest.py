"""Shared fixtures: a small real project in a real git repository, and an isolated cache.
The helpers behind them, and those the test modules import, live in ``support/``.

The embedding cache is per test session (not per test) so the real model embeds each fixture
chunk once; tests that need a cold cache make their own.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# This checkout's engine first, whatever is installed; the repository root for ``bench.*``,
# the helpers the tests share with the benchmarks (bench/crash.py, bench/lsp_client.py).
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "server"))

from support.project import git, init_repo, write_project  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    cache = tmp_path_factory.mktemp("ce-cache")
    os.environ["CODE_EVIDENCE_CACHE_DIR"] = str(cache)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The shop project as a git repo: two commits on main, a feature branch with a third."""
    root = tmp_path / "shop"
    root.mkdir()
    write_project(root)
    init_repo(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    (root / "src/shop/storage.py").write_text(
        (root / "src/shop/storage.py").read_text() + "\n\ndef delete_file(path: Path) -> None:\n"
        "    path.unlink()\n"
    )
    git(root, "commit", "-qam", "second")
    git(root, "checkout", "-q", "-b", "feature")
    (root / "src/shop/shipping.py").write_text(
        "def shipping_cost(weight_kg: float) -> float:\n    return 4.5 + weight_kg * 1.2\n"
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "shipping")
    git(root, "checkout", "-q", "main")
    (root / ".env").write_text("API_KEY=supersecret\n")  # untracked and not ignored: a secret
    return root
