"""A reading worker: another interpreter that reads batches of a pass's files for
``reading.py`` and sends the results back over its standard streams.

Why not ``multiprocessing``: its ``spawn`` start imports the parent's main script again in every
worker (a library user's script without a ``__main__`` guard would run its top level once more
per worker), and it gives the worker the parent's ``sys.path``, whose first entry is the
current folder when the parent runs with ``python -m`` — inside a hostile repository, its
``jieba.py`` would be imported. This worker starts with ``-P`` (no such entry) in ``/``, imports
only this package and what it imports, and talks in length-prefixed pickles over two private
pipes whose both ends are this package's code. It exits when its input ends.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import subprocess
import sys
import traceback
from pathlib import Path
from typing import IO, Any

_LENGTH = struct.Struct("<Q")
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds code_evidence/


class WorkerDied(Exception):
    """The worker's pipes closed before its answer came (killed, out of memory, crashed)."""


def frame(obj: Any) -> bytes:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(data)) + data


def write_frame(stream: IO[bytes], obj: Any) -> None:
    stream.write(frame(obj))
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    """The next object, or raise EOFError when the stream ends (between or inside frames)."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        raise EOFError
    (size,) = _LENGTH.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class ReadWorker:
    """The parent's handle on one worker process: send it a batch, receive its results in
    the order the batches were sent."""

    def __init__(self, setup: tuple[Any, ...]) -> None:
        env = dict(os.environ)
        path = env.get("PYTHONPATH")
        env["PYTHONPATH"] = f"{PACKAGE_ROOT}{os.pathsep}{path}" if path else str(PACKAGE_ROOT)
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "code_evidence.index.readworker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd="/",
            env=env,
        )
        try:
            self.send(setup)
        except WorkerDied:
            self.close(kill=True)
            raise

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, obj: Any) -> None:
        assert self.proc.stdin is not None
        try:
            write_frame(self.proc.stdin, obj)
        except OSError as exc:  # a broken pipe: the worker is gone
            raise WorkerDied(f"worker {self.pid}: {exc}") from exc

    def receive(self) -> Any:
        """The next batch's results; a batch that raised raises here, with the worker's
        traceback as a note."""
        assert self.proc.stdout is not None
        try:
            status, payload, tb = read_frame(self.proc.stdout)
        except EOFError:
            code = self.proc.poll()
            raise WorkerDied(f"worker {self.pid} exited ({code})") from None
        if status == "error":
            payload.add_note(f"in reading worker {self.pid}:\n{tb}")
            raise payload
        return payload

    def close(self, kill: bool = False) -> None:
        """End the worker: close its input and let it exit, or kill it (a cancelled pass, a
        worker that does not exit)."""
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        if kill:
            self.proc.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _serve() -> None:
    from . import cjk
    from .reading import Reader

    # Ctrl-C in a terminal reaches the whole process group: the parent decides what it means
    # (a cancelled pass closes or kills its workers), so a worker does not die with a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # anything printed goes to the log, never between the frames
    try:
        workspace, overlays, known_hashes, rechunk, cfg, segmenter = read_frame(stdin)
    except EOFError:
        return
    cjk.SEGMENTER = segmenter
    reader = Reader(workspace, overlays, known_hashes, rechunk, cfg)
    while True:
        try:
            batch = read_frame(stdin)
        except EOFError:
            return
        try:
            answer = frame(("ok", [reader.read(entry) for entry in batch], ""))
        except Exception as exc:  # the pass fails as it would on a thread, told why
            tb = traceback.format_exc()
            try:
                answer = frame(("error", exc, tb))
            except Exception:  # an exception that does not pickle: its text
                answer = frame(("error", RuntimeError(repr(exc)), tb))
        try:
            stdout.write(answer)
            stdout.flush()
        except OSError:  # the parent is gone (killed): nobody to answer
            return


if __name__ == "__main__":
    _serve()
