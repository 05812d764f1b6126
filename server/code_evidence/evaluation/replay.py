"""A private copy of the workspace moved from commit to commit, indexed at each stop.

Evaluating a mined case needs the index as of the commit's parent. Building a fresh index per
case would cost a full index each time; instead one temporary tree is moved through history by
writing only the files that differ between two stops (``git diff --raw``, contents through
``git.GitBlobs``), and the engine's incremental pass re-reads only those. Chunk texts seen
before get their vectors from the shared content-addressed cache, so a stop re-embeds only new
code. The user's working tree and index are never touched: the copy lives in a temporary
folder.

History is untrusted: a stop whose tree holds a ``.git`` entry, ``..`` or an absolute path is
refused (:class:`git.UnsafeTree`) before anything is written, and the copy stays where it was.
Git never runs inside the copy.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..config import Config
from ..engine import Engine, EngineError
from ..git import Git, GitError
from ..index import snapshot as history
from ..index.snapshot import UnsafeTree, unsafe_path
from ..secrets import is_secret_path

_SYMLINK, _GITLINK = "120000", "160000"


class Replay:
    """The tree of one commit at a time, with an engine over it; :meth:`at` moves both."""

    def __init__(
        self,
        workspace: Path,
        config: Config,
        scratch: Path | None = None,
        git: Git | None = None,
    ) -> None:
        self.git = git if git is not None else Git(workspace)
        if not self.git.is_repo():
            raise EngineError(self.git.refusal or f"{workspace} is not inside a git repository")
        self.workspace = workspace
        self.config = config
        self.root = Path(tempfile.mkdtemp(prefix="code-evidence-replay-", dir=scratch))
        self.tree = self.root / "tree"
        self.commit: str | None = None
        self._engine: Engine | None = None
        self._blobs = self.git.blobs()

    def __enter__(self) -> Replay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None
        self._blobs.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def at(self, sha: str) -> Engine:
        """The engine with the tree and the index exactly as of ``sha``. Raises
        :class:`git.UnsafeTree` (the copy unchanged) when that tree must not be written."""
        self.move_to(sha)
        if self._engine is None:
            self._engine = Engine(self.tree, self.root / "index", config=self.config, use_git=False)
        self._engine.index()
        return self._engine

    def move_to(self, sha: str) -> None:
        """Make the tree equal to ``sha`` (the workspace's part of it)."""
        if self.commit is None:
            self._unpack(sha)
            return
        if self.commit == sha:
            return
        out = self.git.output(
            "diff",
            "--raw",
            "-z",
            "--no-renames",
            "--no-textconv",
            "--no-ext-diff",
            "--relative",
            self.commit,
            sha,
            "--",
            ".",
        )
        if out is None:
            raise EngineError(f"git diff {self.commit[:12]}..{sha[:12]} failed")
        fields = out.decode("utf-8", "surrogateescape").split("\0")
        changes = [
            (meta.split(), path)
            for meta, path in zip(fields[0::2], fields[1::2], strict=False)
            if len(meta.split()) >= 5
        ]
        for _, path in changes:  # all checked before anything is written
            why = unsafe_path(path)
            if why is not None:
                raise UnsafeTree(sha, path, why)
        for parts, path in changes:
            new_mode, new_oid, status = parts[1], parts[3], parts[4][:1]
            target = self.tree / path
            if status == "D" or new_mode in (_SYMLINK, _GITLINK) or is_secret_path(path):
                if target.is_symlink() or target.is_file():
                    target.unlink()
                continue
            data = self._blobs.read_object(new_oid)
            if data is not None:
                history.write_file(self.tree, path, data)
        self.commit = sha

    def _unpack(self, sha: str) -> None:
        # Symlinks stay out: moves between commits write file contents only.
        try:
            history.unpack(self.git, sha, self.tree, links=False)
        except UnsafeTree:
            raise
        except GitError as exc:
            raise EngineError(str(exc)) from exc
        self.commit = sha
