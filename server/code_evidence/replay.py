"""A private copy of the workspace moved from commit to commit, indexed at each stop.

Evaluating a mined case needs the index as of the commit's parent. Building a fresh index per
case would cost a full index each time; instead one temporary tree is moved through history by
writing only the files that differ between two stops (``git diff --raw`` + one ``git cat-file
--batch``), and the engine's incremental pass re-reads only those. Chunk texts seen before get
their vectors from the shared content-addressed cache, so a stop re-embeds only new code. The
user's working tree and index are never touched: the copy lives in a temporary folder.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from .config import Config
from .engine import Engine, EngineError
from .scan import git_output

_SYMLINK, _GITLINK = "120000", "160000"


class Replay:
    """The tree of one commit at a time, with an engine over it; :meth:`at` moves both."""

    def __init__(self, workspace: Path, config: Config, scratch: Path | None = None) -> None:
        if git_output(workspace, "rev-parse", "--show-toplevel") is None:
            raise EngineError(f"{workspace} is not inside a git repository")
        self.workspace = workspace
        self.config = config
        self.root = Path(tempfile.mkdtemp(prefix="code-evidence-replay-", dir=scratch))
        self.tree = self.root / "tree"
        self.commit: str | None = None
        self._engine: Engine | None = None

    def __enter__(self) -> Replay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None
        shutil.rmtree(self.root, ignore_errors=True)

    def at(self, sha: str) -> Engine:
        """The engine with the tree and the index exactly as of ``sha``."""
        self.move_to(sha)
        if self._engine is None:
            self._engine = Engine(self.tree, self.root / "index", config=self.config)
        self._engine.index()
        return self._engine

    def move_to(self, sha: str) -> None:
        """Make the tree equal to ``sha`` (the workspace's part of it)."""
        if self.commit is None:
            self._unpack(sha)
            return
        if self.commit == sha:
            return
        out = git_output(
            self.workspace,
            "diff",
            "--raw",
            "-z",
            "--no-renames",
            "--relative",
            self.commit,
            sha,
            "--",
            ".",
        )
        if out is None:
            raise EngineError(f"git diff {self.commit[:12]}..{sha[:12]} failed")
        fields = out.decode("utf-8", "surrogateescape").split("\0")
        write: list[str] = []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            parts = meta.split()
            if len(parts) < 5:
                continue
            new_mode, status = parts[1], parts[4][:1]
            target = self.tree / path
            if status == "D" or new_mode in (_SYMLINK, _GITLINK):
                if target.is_symlink() or target.is_file():
                    target.unlink()
            else:
                write.append(path)
        self._write_blobs(sha, write)
        self.commit = sha

    def _unpack(self, sha: str) -> None:
        # "." from inside the workspace: only its folder, with paths relative to it.
        data = git_output(self.workspace, "archive", "--format=tar", sha, ".", timeout=600)
        if data is None:
            raise EngineError(f"git archive of {sha[:12]} failed")
        staging = Path(tempfile.mkdtemp(prefix="unpack-", dir=self.tree.parent))
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            members = [m for m in tar.getmembers() if not m.issym() and not m.islnk()]
            tar.extractall(staging, members=members, filter="data")
        staging.rename(self.tree)
        self.commit = sha

    def _write_blobs(self, sha: str, paths: list[str]) -> None:
        if not paths:
            return
        names = "".join(f"{sha}:./{p}\n" for p in paths).encode("utf-8", "surrogateescape")
        proc = subprocess.run(
            ["git", "cat-file", "--batch"],
            cwd=self.workspace,
            input=names,
            capture_output=True,
            check=True,
        )
        data, pos = proc.stdout, 0
        for path in paths:
            end = data.index(b"\n", pos)
            header = data[pos:end].split()
            pos = end + 1
            if len(header) != 3 or header[1] != b"blob":
                continue
            size = int(header[2])
            target = self.tree / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink():
                target.unlink()
            target.write_bytes(data[pos : pos + size])
            pos += size + 1
