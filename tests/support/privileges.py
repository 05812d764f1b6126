"""Running a command with less power than the test process has.

The tests often run as root, which reads every file whatever its mode, so a permission bug is
invisible there. ``setpriv`` (util-linux) takes the powers away for one command: without
``CAP_DAC_OVERRIDE``/``CAP_DAC_READ_SEARCH`` root obeys file modes like any user
(:func:`without_dac`), and ``--reuid`` runs it as another user (:func:`as_other_user`). Each
helper checks first that the machine lets it do that, and the tests skip saying why when not.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

NOBODY = 65534
_DROP_DAC = ["--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all"]


def _setpriv() -> str | None:
    return shutil.which("setpriv")


@lru_cache(maxsize=1)
def _dac_drop_works() -> str | None:
    """None when a command run :func:`without_dac` is refused a mode-0 file; else why not."""
    if _setpriv() is None:
        return "setpriv (util-linux) is not installed"
    with tempfile.TemporaryDirectory() as tmp:
        locked = Path(tmp) / "locked"
        locked.write_text("x")
        locked.chmod(0)
        try:
            done = subprocess.run(
                [*without_dac_prefix(), "cat", str(locked)], capture_output=True, timeout=30
            )
        except OSError as exc:
            return f"setpriv cannot run here: {exc}"
        if done.returncode == 0 and os.geteuid() == 0:
            return "dropping CAP_DAC_OVERRIDE does not take effect here"
    return None


def without_dac_prefix() -> list[str]:
    """The command prefix that runs a program without the power to ignore file modes (for
    a non-root user: nothing to drop, the prefix is empty)."""
    if os.geteuid() != 0:
        return []
    return [_setpriv() or "setpriv", *_DROP_DAC]


def require_modes_enforced() -> list[str]:
    """The prefix of :func:`without_dac_prefix`, or skip the test saying why it cannot be."""
    if os.geteuid() != 0:
        return []
    why = _dac_drop_works()
    if why is not None:
        pytest.skip(f"file modes cannot be enforced for a root test run: {why}")
    return without_dac_prefix()


@lru_cache(maxsize=1)
def _other_user_works() -> str | None:
    if os.geteuid() != 0:
        return "running another user's command needs root"
    if _setpriv() is None:
        return "setpriv (util-linux) is not installed"
    try:
        done = subprocess.run(as_other_user(["true"]), capture_output=True, timeout=30)
    except OSError as exc:
        return f"setpriv cannot run here: {exc}"
    return None if done.returncode == 0 else f"setpriv --reuid failed: {done.stderr!r}"


def as_other_user(cmd: list[str]) -> list[str]:
    """``cmd`` run as the user ``nobody``, with no capabilities."""
    return [
        _setpriv() or "setpriv",
        f"--reuid={NOBODY}",
        f"--regid={NOBODY}",
        "--clear-groups",
        *_DROP_DAC,
        *cmd,
    ]


def require_other_user() -> None:
    why = _other_user_works()
    if why is not None:
        pytest.skip(f"cannot act as another user here: {why}")


def open_folder(prefix: str = "ce-shared-") -> Path:
    """A folder everyone may enter (0755, under /tmp), unlike pytest's own temporary folders
    (0700): what another user could read in it depends only on what the test wrote."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    path.chmod(0o755)
    return path
