"""File watching for one workspace folder: watchdog events, debounced into batches.

A ``git checkout`` or a build writes thousands of files in a second; each event costing an
index pass would keep the machine busy for minutes. Events are collected until the folder has
been quiet for ``quiet_s`` (or ``max_wait_s`` after the first one, so a never-ending stream
still gets indexed) and handed over as one :class:`Batch`. Git's own folder is watched only for
what moves HEAD (``HEAD``, ``refs/``, ``packed-refs``): a commit, checkout, rebase or stash,
even one that touches no working file, must move the index to the new commit.

Which paths matter is decided on the debouncer's thread, never in watchdog's callback: the
ignore check runs ``git check-ignore`` once per batch.

A question about code an agent has just edited must see the edit: the write is queued by the
kernel before the question is even sent, but watchdog's threads may not have handed it to the
debouncer yet. :meth:`FolderWatcher.fence` waits for that hand-over by writing a probe file in
a private folder the same observer watches: its event comes through the same inotify reader
after every event queued before it (see the method).

The debouncer reads time and waits through a :class:`Clock`, so its tests drive a fake clock
step by step instead of sleeping.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pathspec
from watchdog.events import (
    EVENT_TYPE_CLOSED,
    EVENT_TYPE_CREATED,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MODIFIED,
    EVENT_TYPE_MOVED,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

try:  # Linux only: elsewhere importing it fails, and there is no probe (see FolderWatcher.fence)
    from watchdog.observers.inotify import InotifyObserver
except (ImportError, OSError):  # pragma: no cover - not Linux
    InotifyObserver = None  # type: ignore[assignment,misc]

from ..git import Git
from ..paths import private_dir

log = logging.getLogger(__name__)

# Opens and reads are not changes. They are not even subscribed to: an index pass opens every
# file of the workspace, and decoding those inotify events kept watchdog busy for minutes on a
# large tree, delaying the events that matter.
_CHANGE_EVENTS = frozenset(
    {EVENT_TYPE_CREATED, EVENT_TYPE_DELETED, EVENT_TYPE_MODIFIED}
    | {EVENT_TYPE_MOVED, EVENT_TYPE_CLOSED}
)
_EVENT_FILTER: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]
# A burst (a checkout, a build) writes its files well under this apart; a save is one or two
# events, and every millisecond here is a millisecond before the save is searchable. A burst
# split in two costs little: a pass over the watcher's paths stats only those (issue 24).
QUIET_S = 0.15  # a burst ends after this long without events...
MAX_WAIT_S = 3.0  # ...or this long after its first event, whichever comes first
# How long a write can take to reach the debouncer (kernel, watchdog's threads, the handler):
# about a millisecond as a rule, but on an idle 2-core machine 5 of 200 writes took over 20 ms
# (99th percentile 59 ms, the slowest 275 ms), and on a busy one longer still. A question about
# code just edited waits for the watcher's probe (``FolderWatcher.fence``) up to FENCE_TIMEOUT_S,
# then a grace for the workspace's own event thread: FENCE_GRACE_S, or as long as the probe's
# trip took when the machine is busy (a thread a step behind is as late as the probe was), up
# to EVENT_LATENCY_S; where there is no probe it waits EVENT_LATENCY_S instead
# (``PassScheduler.settle``).
EVENT_LATENCY_S = 0.1
FENCE_TIMEOUT_S = 2.0
FENCE_GRACE_S = 0.01


@dataclass(slots=True)
class Batch:
    """What changed during one burst: workspace files (absolute paths), whether HEAD moved,
    and whether an editor buffer changed."""

    paths: set[str] = field(default_factory=set)
    head: bool = False
    buffers: bool = False
    events: int = 0


class Clock(Protocol):
    """The debouncer's time and waiting."""

    def now(self) -> float:
        """Seconds on a clock that never goes back."""
        ...

    def wait(self, cond: threading.Condition, timeout: float | None) -> None:
        """Block on ``cond`` (held by the caller) until it is notified or ``timeout`` seconds
        of this clock have passed (``None``: until notified). Waking early is allowed: the
        caller checks the time again."""
        ...


class MonotonicClock:
    """Wall time: ``time.monotonic`` and the condition's own timed wait."""

    def now(self) -> float:
        return time.monotonic()

    def wait(self, cond: threading.Condition, timeout: float | None) -> None:
        cond.wait(timeout)


class Debouncer:
    """Collects changes and calls ``flush`` on its own thread once per quiet period."""

    def __init__(
        self,
        flush: Callable[[Batch], None],
        quiet_s: float = QUIET_S,
        max_wait_s: float = MAX_WAIT_S,
        clock: Clock | None = None,
    ) -> None:
        self._flush = flush
        self.quiet_s = quiet_s
        self.max_wait_s = max_wait_s
        self._clock: Clock = clock if clock is not None else MonotonicClock()
        self._cond = threading.Condition()
        self._batch = Batch()
        self._first = 0.0
        self._last = 0.0
        self._closed = False
        self._handing = False  # its thread has taken a batch and its flush has not returned
        self._thread = threading.Thread(target=self._run, name="ce-debounce", daemon=True)
        self._thread.start()

    def add(self, path: str | None = None, head: bool = False, buffers: bool = False) -> None:
        with self._cond:
            now = self._clock.now()
            if not self._batch.events:
                self._first = now
            self._last = now
            self._batch.events += 1
            if path is not None:
                self._batch.paths.add(path)
            self._batch.head |= head
            self._batch.buffers |= buffers
            self._cond.notify()

    def take(self, timeout: float) -> Batch | None:
        """The changes collected so far, now, instead of at the end of the quiet period (a
        caller that must answer from an index that includes them); None when there are none.

        A batch this debouncer's own thread has already taken is not here any more, but its
        flush may not have acted on it yet (the ignore check runs ``git check-ignore``, slow
        on a busy machine): this waits up to ``timeout`` seconds for that flush to return, so
        that the caller finds the pass it asked for already requested. Without the wait a
        question about a file just saved was answered from the index as it was."""
        with self._cond:
            batch, self._batch = self._batch, Batch()
            deadline = time.monotonic() + timeout
            while self._handing:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)  # real time: a flush runs on the wall clock
        return batch if batch.events else None

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._batch.events and not self._closed:
                    self._clock.wait(self._cond, None)
                if self._closed:
                    return
                while True:
                    now = self._clock.now()
                    due = min(self._last + self.quiet_s, self._first + self.max_wait_s)
                    if now >= due or self._closed:
                        break
                    self._clock.wait(self._cond, due - now)
                if self._closed:
                    return
                batch, self._batch = self._batch, Batch()
                self._handing = bool(batch.events)
            if not batch.events:
                continue  # taken meanwhile (take())
            try:
                self._flush(batch)
            except Exception:  # a failing flush must not stop watching
                log.exception("handling a batch of file changes failed")
            finally:
                with self._cond:
                    self._handing = False
                    self._cond.notify_all()


def _is_head_file(rel: str) -> bool:
    """Files whose change means HEAD may point at another commit."""
    if rel.endswith(".lock"):
        return False
    return rel in ("HEAD", "packed-refs") or rel.startswith("refs/")


class IgnoreFilter:
    """Drops paths the index never holds, using git's own rules inside a repository and the
    top-level ``.gitignore`` outside one (or where git is refused)."""

    def __init__(self, root: Path, git: Git) -> None:
        self.root = root
        self.git = git
        self.in_git = git.is_repo()
        self._spec: pathspec.GitIgnoreSpec | None = None
        self._spec_mtime: float | None = None

    def relevant(self, paths: Iterable[str]) -> list[str]:
        rels = []
        for p in paths:
            try:
                rel = Path(p).relative_to(self.root).as_posix()
            except ValueError:
                continue
            if rel and rel != ".":
                rels.append(rel)
        if not rels:
            return []
        ignored = self._git_ignored(rels) if self.in_git else self._spec_ignored(rels)
        return [r for r in rels if r not in ignored]

    def _git_ignored(self, rels: list[str]) -> set[str]:
        return self.git.ignored(rels) or set()

    def _spec_ignored(self, rels: list[str]) -> set[str]:
        path = self.root / ".gitignore"
        try:
            mtime = path.stat().st_mtime
        except OSError:
            return set()
        if mtime != self._spec_mtime:
            try:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
                self._spec = pathspec.GitIgnoreSpec.from_lines(lines)
            except (OSError, ValueError):
                self._spec = None
            self._spec_mtime = mtime
        if self._spec is None:
            return set()
        return {r for r in rels if self._spec.match_file(r)}


class _ProbeHandler(FileSystemEventHandler):
    """The probe folder's events: a probe file created (see ``FolderWatcher.fence``)."""

    def __init__(self, watcher: FolderWatcher) -> None:
        self.watcher = watcher

    def on_created(self, event: FileSystemEvent) -> None:
        if not event.is_directory:
            self.watcher._probe_seen(os.fsdecode(event.src_path))


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: FolderWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in _CHANGE_EVENTS:
            return
        if event.is_directory and event.event_type == EVENT_TYPE_MODIFIED:
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                self.watcher.classify(os.fsdecode(raw))


class FolderWatcher:
    """Watches one workspace folder (and its git folder) and feeds a :class:`Debouncer`."""

    def __init__(
        self,
        root: Path,
        debouncer: Debouncer,
        git: Git,
        skip: Iterable[Path] = (),
        probe_dir: Path | None = None,
    ) -> None:
        """``probe_dir``: a private folder for :meth:`fence`'s probe files (never in the
        workspace: nothing is written there); without one, ``fence`` returns False."""
        self.root = root
        self.debouncer = debouncer
        self.git_dirs = git.git_dirs()
        self._skip = [str(p) for p in skip]
        self._observer = Observer()
        self.error: str | None = None
        self._probe_dir = probe_dir
        self._probing = False
        self._probe_cond = threading.Condition()
        self._probes_sent = 0
        self._probes_seen = 0
        self._probe_prefix = f"{os.getpid()}-"

    def start(self) -> None:
        handler = _Handler(self)
        try:
            self._observer.schedule(
                handler, str(self.root), recursive=True, event_filter=_EVENT_FILTER
            )
            for gd in self.git_dirs:
                if not _inside(str(gd), str(self.root)):
                    self._observer.schedule(
                        handler, str(gd), recursive=True, event_filter=_EVENT_FILTER
                    )
            self._start_probe()
            self._observer.start()
        except OSError as exc:  # e.g. the inotify watch limit
            self.error = f"file watching is unavailable ({exc}); saved files are still indexed"
            log.warning("%s", self.error)

    def _start_probe(self) -> None:
        """Watch the probe folder (emptied of this process id's leftovers); a folder that
        cannot be made or watched only means no fence (``settle`` then waits a fixed time)."""
        if (
            self._probe_dir is None
            or InotifyObserver is None
            or not isinstance(self._observer, InotifyObserver)
        ):
            return  # the ordering ``fence`` relies on is inotify's (FSEvents and others wait)
        try:
            private_dir(self._probe_dir)
            for old in self._probe_dir.glob(f"{self._probe_prefix}*"):
                old.unlink(missing_ok=True)
            self._observer.schedule(
                _ProbeHandler(self),
                str(self._probe_dir),
                recursive=False,
                event_filter=[FileCreatedEvent],
            )
            self._probing = True
        except OSError as exc:
            log.warning("no watcher probe in %s (%s): a fixed wait instead", self._probe_dir, exc)

    @property
    def probing(self) -> bool:
        """Whether :meth:`fence` sends a probe: inotify, a probe folder, and no probe
        outstanding past its timeout."""
        return self._probing

    def fence(self, timeout: float = FENCE_TIMEOUT_S) -> bool:
        """Wait until every file change made before this call has reached the debouncer;
        True when the probe came through within ``timeout`` seconds, False without a probe.

        A probe file is created in the probe folder. The kernel queues inotify events in the
        order they happen, and one watchdog thread reads them all from one inotify descriptor
        (watchdog 7.1: one per observer, shared by its watches; hence the requirement) and
        passes each to its watch's queue in that order, so when the probe's event reaches its
        handler, every earlier workspace event has left the reader. Each watch then has its
        own thread to the dispatcher, so the workspace's may still be a step behind: it is
        allowed ``FENCE_GRACE_S`` more, or the probe's own trip when that took longer (up to
        ``EVENT_LATENCY_S``): the trip measures how busy the machine is right now, which a
        fixed wait cannot (10 ms alone let one write in 300 through under two busy
        processes)."""
        if not self._probing or not self.watching or self._probe_dir is None:
            return False
        with self._probe_cond:
            self._probes_sent += 1
            n = self._probes_sent
        path = self._probe_dir / f"{self._probe_prefix}{n}"
        sent = time.monotonic()
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600))
        except OSError as exc:
            log.debug("watcher probe %s: %s", path, exc)
            return False
        try:
            deadline = time.monotonic() + timeout
            with self._probe_cond:
                while self._probes_seen < n:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        # Far behind (a checkout's thousands of events ahead of it) or lost:
                        # either way the next questions would each wait the whole timeout.
                        # Wait the fixed time instead until this probe shows up after all.
                        self._probing = False
                        log.warning("the watcher's probe took over %.1f s: fixed waits", timeout)
                        return False
                    self._probe_cond.wait(left)
            # The workspace's event thread may be a step behind the probe's: on a busy machine
            # (CI beside other jobs) by as much as the probe's own trip took.
            trip = time.monotonic() - sent
            time.sleep(min(max(FENCE_GRACE_S, trip), EVENT_LATENCY_S))
            return True
        finally:
            path.unlink(missing_ok=True)

    def _probe_seen(self, path: str) -> None:
        name = os.path.basename(path)
        if not name.startswith(self._probe_prefix):
            return  # another process's probe in a shared index folder
        try:
            n = int(name[len(self._probe_prefix) :])
        except ValueError:
            return
        with self._probe_cond:
            if n > self._probes_seen:
                self._probes_seen = n
                self._probe_cond.notify_all()
            if not self._probing and n == self._probes_sent:  # the late probe: caught up
                self._probing = True

    @property
    def watching(self) -> bool:
        return self._observer.is_alive()

    def stop(self) -> None:
        try:
            self._observer.stop()
            self._observer.join(timeout=5)
        except RuntimeError:  # never started
            pass

    def classify(self, path: str) -> None:
        for gd in self.git_dirs:
            if _inside(path, str(gd)):
                rel = os.path.relpath(path, gd).replace(os.sep, "/")
                if _is_head_file(rel):
                    self.debouncer.add(head=True)
                return
        if any(_inside(path, s) for s in self._skip):
            return
        parts = Path(path).parts
        if ".git" in parts or ".hg" in parts or ".svn" in parts:
            return
        self.debouncer.add(path)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
