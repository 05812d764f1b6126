"""The one way Code Evidence runs git, on a repository it must treat as hostile.

A developer opens a repository they just cloned or unpacked, and indexing starts before they
have read a line of it. Its ``.git/config`` is not theirs: through git it can name programs
(filter drivers, textconv, external diff, fsmonitor, hooks, gpg, ssh, askpass, pager, ...) that
a plain ``git status`` or ``git log`` would run. So every git command goes through
:class:`Git`, which

- overrides every setting that names a program (:data:`SAFE_CONFIG`), and empties every filter
  and diff driver the repository's own configuration defines (read with ``git config --list``,
  which runs nothing), so ``status`` cannot run a clean filter and ``diff`` no textconv;
- passes ``--no-pager`` and, where a command diffs, ``--no-textconv`` / ``--no-ext-diff``;
- reads file contents only with ``ls-tree`` / ``cat-file`` (nothing that applies filters; no
  ``git archive``: it applies smudge filters);
- refuses a repository owned by another user, as git itself would, unless the user opted in
  (a CLI flag or an LSP initialization option: never anything inside the repository). Such a
  folder is then indexed as a plain folder, with :attr:`Git.refusal` saying why.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

STATE_TIMEOUT_S = 30.0
LIST_TIMEOUT_S = 120.0

# Settings that name a program, set to values that run nothing. ``-c`` on the command line
# outranks every configuration file, the repository's included.
_NOTHING = "/dev/null"  # not executable: a program setting pointing here cannot start
SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", _NOTHING),
    ("core.pager", "cat"),
    ("core.editor", _NOTHING),
    ("sequence.editor", _NOTHING),
    ("core.sshCommand", _NOTHING),
    ("core.askPass", ""),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("log.showSignature", "false"),
    ("gpg.program", _NOTHING),
    ("gpg.openpgp.program", _NOTHING),
    ("gpg.x509.program", _NOTHING),
    ("gpg.ssh.program", _NOTHING),
    ("gpg.ssh.defaultKeyCommand", ""),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
)
# Per-driver keys that name a program; a driver the repository defines gets them emptied.
_DRIVER_KEYS = re.compile(r"^(filter|diff|merge)\.(.+)\.([a-z]+)$", re.IGNORECASE)
_DRIVER_PROGRAMS = {
    "filter": {"clean": "", "smudge": "", "process": "", "required": "false"},
    "diff": {"textconv": "", "command": ""},
    "merge": {"driver": ""},
}
# Variables that would point git at some other repository than the workspace (set, e.g., when
# we run inside a git hook), or run a program of the environment's choosing.
_GIT_LOCATION_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
)
_DUBIOUS = b"dubious ownership"


class GitError(Exception):
    """A git command that had to succeed did not; the message is meant for the user."""


@dataclass(frozen=True, slots=True)
class GitState:
    """Where the workspace stands in git. A non-repo is ``(False, None, None, None)``; a
    detached HEAD has no branch; a repo without commits has no commit but names its unborn
    branch."""

    is_repo: bool
    commit: str | None
    branch: str | None
    dirty: bool | None


NOT_A_REPO = GitState(False, None, None, None)


@dataclass(frozen=True, slots=True)
class TreeEntry:
    mode: str  # "100644", "100755", "120000" (symlink), "160000" (submodule)
    kind: str  # "blob", "tree", "commit"
    oid: str
    path: str  # relative to the workspace, POSIX separators


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_LOCATION_VARS}
    env["GIT_TERMINAL_PROMPT"] = "0"
    # Read-only use: never take index.lock (a refreshing `git status` would), so we cannot
    # collide with the user's own git commands.
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_PAGER"] = "cat"
    return env


def _current_users() -> set[int]:
    """Owners git accepts as "you": the effective user, and under sudo the invoking one."""
    uid = os.geteuid()
    users = {uid}
    sudo = os.environ.get("SUDO_UID", "")
    if uid == 0 and sudo.isdigit():
        users.add(int(sudo))
    return users


def _find_repository(root: Path) -> tuple[Path, Path] | None:
    """(worktree top, git folder) of the repository holding ``root``, found as git finds it:
    the nearest ``.git`` folder, or ``.git`` file naming one, at or above ``root``."""
    for folder in (root, *root.parents):
        dotgit = folder / ".git"
        try:
            st = os.lstat(dotgit)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            return folder, dotgit
        if stat.S_ISREG(st.st_mode):
            try:
                text = dotgit.read_text(encoding="utf-8", errors="replace")[:4096]
            except OSError:
                return folder, dotgit
            target = text.strip().removeprefix("gitdir:").strip()
            gitdir = Path(target) if os.path.isabs(target) else folder / target
            return folder, gitdir
    return None


def _owner(path: Path) -> int | None:
    try:
        return os.stat(path).st_uid
    except OSError:
        return None


class Git:
    """Git for one workspace folder, hardened (see the module docstring).

    ``trust_other_owner``: the user's explicit opt-in to use git in a repository another user
    owns. Even then nothing that repository configures can run: only git's ownership refusal
    is lifted, for this repository alone.
    """

    def __init__(
        self, root: Path | str, trust_other_owner: bool = False, enabled: bool = True
    ) -> None:
        self.root = Path(os.path.realpath(root))
        self.trust_other_owner = trust_other_owner
        # Off for folders we wrote ourselves (snapshots, replays): they are plain folders, and
        # git must not find some repository above them.
        self.enabled = enabled
        self.refusal: str | None = None  # why git is not used here, for the user
        self._safe_dirs: list[str] = []
        self._drivers_key: tuple[object, ...] | None = None
        self._drivers: list[str] = []
        self._origins: list[str] = []
        if enabled:
            self._check_owner()

    # -- ownership -------------------------------------------------------------------------
    def _check_owner(self) -> None:
        found = _find_repository(self.root)
        if found is None:
            return
        top, gitdir = found
        users = _current_users()
        strangers = [
            (p, uid) for p in (top, gitdir) if (uid := _owner(p)) is not None and uid not in users
        ]
        if not strangers:
            return
        path, uid = strangers[0]
        if self.trust_other_owner:
            self._safe_dirs = [os.path.realpath(top), os.path.realpath(gitdir)]
            return
        self.refusal = (
            f"the git repository at {top} is owned by another user (uid {uid} owns {path}; "
            f"you are uid {os.geteuid()}): indexed as a plain folder, without running git in it. "
            "If you trust it, pass --trust-other-owner (CLI) or the trustOtherOwner "
            "initialization option (language server)"
        )

    @property
    def usable(self) -> bool:
        """False when git must not be run here at all (another user's repository)."""
        return self.enabled and self.refusal is None

    # -- running ---------------------------------------------------------------------------
    def _base(self) -> list[str]:
        cmd = ["git", "--no-pager"]
        for key, value in SAFE_CONFIG:
            cmd += ["-c", f"{key}={value}"]
        for safe in self._safe_dirs:
            cmd += ["-c", f"safe.directory={safe}"]
        return cmd

    def command(self, *args: str) -> list[str]:
        """The full argument list for ``git <args>`` in this workspace, hardened."""
        cmd = self._base()
        for item in self._driver_overrides():
            cmd += ["-c", item]
        return [*cmd, "-C", os.fspath(self.root), *args]

    def output(
        self,
        *args: str,
        timeout: float = STATE_TIMEOUT_S,
        input: bytes | None = None,
        ok: tuple[int, ...] = (0,),
    ) -> bytes | None:
        """stdout of one git command, or None when git is refused here, missing, fails (an
        exit code outside ``ok``) or hangs."""
        if not self.usable:
            return None
        return self._run(self.command(*args), timeout, input, ok, args[0] if args else "")

    def _run(
        self,
        cmd: list[str],
        timeout: float,
        input: bytes | None,
        ok: tuple[int, ...],
        what: str,
    ) -> bytes | None:
        try:
            proc = subprocess.run(
                cmd,
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                env=_environment(),
                timeout=timeout,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            log.debug("git %s failed: %s", what, exc)
            return None
        if proc.returncode not in ok:
            if _DUBIOUS in proc.stderr and self.refusal is None:
                self.refusal = (
                    f"git refuses {self.root}: {proc.stderr.decode('utf-8', 'replace').strip()}"
                    " — indexed as a plain folder. If you trust it, pass --trust-other-owner"
                )
            log.debug("git %s: rc=%s %s", what, proc.returncode, proc.stderr[:500])
            return None
        return proc.stdout

    def _driver_overrides(self) -> list[str]:
        """``key=`` for every program key of a filter/diff/merge driver any configuration
        defines (the repository's, files it includes, and the user's own: nothing we run needs
        a driver). Recomputed when one of those files changes; the listing runs no program."""
        stamp = self._config_stamp()
        if stamp == self._drivers_key:
            return self._drivers
        cmd = [*self._base(), "-C", os.fspath(self.root), "config", "--list", "-z", "--show-origin"]
        raw = self._run(cmd, STATE_TIMEOUT_S, None, (0,), "config") or b""
        fields = raw.split(b"\0")
        names: set[tuple[str, str]] = set()
        origins: set[str] = set()
        for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
            where = origin.decode("utf-8", "surrogateescape")
            if where.startswith("file:"):
                origins.add(where.removeprefix("file:"))
            name = entry.decode("utf-8", "surrogateescape").split("\n", 1)[0]
            m = _DRIVER_KEYS.match(name)
            if m and m.group(1).lower() in _DRIVER_PROGRAMS:
                names.add((m.group(1).lower(), m.group(2)))
        self._origins = sorted(o if os.path.isabs(o) else os.fspath(self.root / o) for o in origins)
        overrides = [
            f"{section}.{driver}.{sub}={value}"
            for section, driver in sorted(names)
            for sub, value in _DRIVER_PROGRAMS[section].items()
        ]
        self._drivers_key, self._drivers = self._config_stamp(), overrides
        return overrides

    def _config_stamp(self) -> tuple[object, ...]:
        """What the drivers depend on: the repository's config files, every file the last
        listing read, and every file they name as an include (git skips a missing include
        silently, and it may appear later), by inode, size and modification time."""
        files: list[str] = []
        found = _find_repository(self.root)
        if found is not None:
            gitdir = found[1]
            files += [os.fspath(gitdir / n) for n in ("config", "config.worktree", "commondir")]
        files += self._origins
        for f in list(files):
            files += _includes(f)
        stamp: list[object] = []
        for f in files:
            try:
                st = os.stat(f)
                stamp.append((f, st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError:
                stamp.append((f, None))
        return tuple(stamp)

    # -- what the project asks of git --------------------------------------------------------
    def toplevel(self) -> Path | None:
        out = self.output("rev-parse", "--show-toplevel")
        text = _line(out)
        return Path(text) if text else None

    def is_repo(self) -> bool:
        return self.toplevel() is not None

    def head_state(self) -> GitState:
        """Commit and branch without ``git status`` (``dirty`` is None): status stats every
        tracked file, a cost a pass over a few saved files must not pay on a large tree."""
        if not self.is_repo():
            return NOT_A_REPO
        commit = _line(self.output("rev-parse", "-q", "--verify", "HEAD^{commit}"))
        branch = _line(self.output("symbolic-ref", "--short", "-q", "HEAD"))
        return GitState(True, commit, branch, None)

    def state(self) -> GitState:
        head = self.head_state()
        if not head.is_repo:
            return head
        status = self.output(
            "status",
            "--porcelain",
            "-z",
            "--untracked-files=normal",
            "--ignore-submodules",
        )
        dirty = None if status is None else bool(status.strip(b"\0"))
        return GitState(True, head.commit, head.branch, dirty)

    def git_dirs(self) -> list[Path]:
        """The repository's git folder and, for a linked worktree, its common folder."""
        dirs: list[Path] = []
        for arg in ("--absolute-git-dir", "--git-common-dir"):
            text = _line(self.output("rev-parse", arg, timeout=10))
            if not text:
                return dirs
            p = Path(text)
            p = (self.root / p).resolve() if not p.is_absolute() else p.resolve()
            if p not in dirs:
                dirs.append(p)
        return dirs

    def ignored(self, rels: list[str]) -> set[str] | None:
        """Which of these workspace-relative paths git's ignore rules exclude (None: unknown)."""
        out = self.output(
            "check-ignore",
            "-z",
            "--stdin",
            timeout=10,
            input="\0".join(rels).encode("utf-8", "surrogateescape") + b"\0",
            ok=(0, 1),  # 1: nothing ignored
        )
        if out is None:
            return None
        return {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}

    def resolve_commit(self, ref: str) -> str | None:
        if not ref.strip() or ref.startswith("-"):
            return None
        return _line(self.output("rev-parse", "-q", "--verify", f"{ref}^{{commit}}"))

    def tree(self, rev: str) -> list[TreeEntry]:
        """Every entry of ``rev``'s tree under the workspace folder, paths relative to it. The
        paths are as the tree holds them: check them before writing (``index/snapshot.py``)."""
        out = self.output("ls-tree", "-r", "-z", rev, timeout=LIST_TIMEOUT_S)
        if out is None:
            raise GitError(f"git ls-tree of {rev[:12]} failed")
        entries = []
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, raw_path = record.partition(b"\t")
            parts = meta.split()
            if len(parts) != 3:
                continue
            path = raw_path.decode("utf-8", "surrogateescape")
            mode, kind, oid = (p.decode("ascii", "replace") for p in parts)
            entries.append(TreeEntry(mode, kind, oid, path))
        return entries

    def blobs(self) -> GitBlobs:
        return GitBlobs(self)


class GitBlobs:
    """File contents at any commit through one ``git cat-file --batch`` process: mining and
    replaying history read thousands of blobs, and a ``git show`` each would spend most of
    the run starting processes. ``cat-file`` applies no filter. Paths are relative to the
    workspace."""

    def __init__(self, git: Git) -> None:
        if not git.usable:
            raise GitError(git.refusal or "git is not usable here")
        self._proc = subprocess.Popen(
            git.command("cat-file", "--batch"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_environment(),
        )

    def __enter__(self) -> GitBlobs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read(self, rev: str, path: str) -> bytes | None:
        """The blob at ``rev:path``, or None when there is none (or it is not a file)."""
        return self.read_object(f"{rev}:./{path}")

    def read_object(self, name: str) -> bytes | None:
        """The blob named ``name`` (an object id or ``rev:path``), or None."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().split()
        if len(header) != 3:  # "<name> missing": nothing follows
            return None
        data = self._proc.stdout.read(int(header[2]))
        self._proc.stdout.read(1)  # the newline after the contents
        return data if header[1] == b"blob" else None  # a folder or submodule: read past it

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        self._proc.wait(timeout=10)


def _includes(config: str) -> list[str]:
    """Files a git config file names with ``include.path`` / ``includeIf.*.path`` (any
    ``path =`` line: naming too many only costs a stat)."""
    try:
        with open(config, encoding="utf-8", errors="replace") as fh:
            text = fh.read(1_000_000)
    except OSError:
        return []
    out = []
    for m in re.finditer(r"^\s*path\s*=\s*(.+?)\s*$", text, re.MULTILINE):
        value = m.group(1).strip('"')
        if value.startswith("~/"):
            value = os.path.expanduser(value)
        out.append(value if os.path.isabs(value) else os.path.join(os.path.dirname(config), value))
    return out


def _line(out: bytes | None) -> str | None:
    if out is None:
        return None
    text = out.decode("utf-8", "replace").strip()
    return text or None
