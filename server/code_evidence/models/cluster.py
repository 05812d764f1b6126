"""Embedding on a Ray cluster: a pool of actors that each load the ONNX model once.

``code-evidence index --cluster ray[://ADDRESS]`` sends the chunk texts the embedding cache
lacks to these actors and writes each finished part into the cache as it arrives, so a monorepo
is embedded by many machines while BM25 already answers (docs/cluster.md). Ray is an optional
extra (``[cluster]``) and is imported only here, only when a cluster is asked for: no other
command, and no test without it, ever loads Ray. Ray's usage statistics and its dashboard are
switched off: nothing leaves the machine but what goes to the cluster the user named.

Faults: a part is finished only once its vectors are in the cache. A part whose actor died
(killed, out of memory, node lost) goes back to the head of the queue and is sent to another
actor; a part that comes back finished is never sent again, and an interrupted run leaves what
finished in the cache, where the next run finds it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
from collections import deque
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .embed_cache import EmbeddingCache
from .embedder import DIM, Embedder, normalise

log = logging.getLogger(__name__)

# Set before Ray is imported: Ray reads them at import and in every process it starts.
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0"}
# For `--cluster ray` only: Ray's own "no cluster" switch. Its node address is then loopback,
# and its servers listen there only (without it Ray 2.60 binds every interface, whatever
# address ray.init is given: tests/test_cluster.py checks the sockets).
LOCAL_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
CLUSTER_INSTALL = "pip install 'code-evidence[cluster]'"
# Texts per task: a second or two of model time on one core, so Ray's per-task cost (a few
# milliseconds, bench/cluster.py) stays small, and parts small enough to spread over actors.
PART_TEXTS = 128
# Parts queued per actor beyond the running one: the actor never waits on the driver.
PREFETCH = 1
# An actor that dies is restarted by Ray this many times (its node may be gone: then on
# another); a part whose actor died this many times fails the run.
MAX_RESTARTS = 2
MAX_PART_FAILURES = 3
# A Ray instance started here (`--cluster ray`) keeps its object store small: parts are KBs.
LOCAL_OBJECT_STORE = 256 * 1024 * 1024


class ClusterError(RuntimeError):
    """The cluster cannot embed (Ray missing, address wrong, every worker lost)."""


@dataclass
class ClusterStats:
    """What a run sent where: reported by the CLI and measured by bench/cluster.py."""

    actors: int = 0
    providers: list[str] = field(default_factory=list)
    parts_sent: int = 0
    parts_done: int = 0
    parts_resent: int = 0
    texts_embedded: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0
    actors_lost: int = 0

    def summary(self) -> str:
        if not self.actors:
            return "nothing to embed; Ray was not started"
        return (
            f"{self.actors} actors ({', '.join(sorted(set(self.providers)))}), "
            f"{self.parts_done} parts, {self.parts_resent} sent again"
        )


def parse_spec(spec: str) -> str:
    """``ray`` starts a private local instance; ``ray://HOST:PORT`` connects to a cluster
    (Ray Client). Anything else is refused rather than guessed."""
    if spec == "ray":
        return "local"
    if spec.startswith("ray://") and len(spec) > len("ray://"):
        return spec
    raise ClusterError(f"--cluster takes `ray` or `ray://HOST:PORT`, not {spec!r}")


def import_ray(local: bool = False) -> Any:
    """Ray, with its usage statistics off; ``local``: with a loopback-only node (this must
    come before Ray's first import in the process, which reads it)."""
    os.environ.update(RAY_ENV)
    if local:
        os.environ.update(LOCAL_ENV)
    try:
        import ray
    except ModuleNotFoundError as exc:
        if exc.name != "ray":
            raise
        raise ClusterError(
            f"--cluster needs Ray, which is not installed. Install it with:\n  {CLUSTER_INSTALL}"
        ) from exc
    return ray


def init_args(address: str, num_cpus: int | None = None) -> dict[str, Any]:
    """``ray.init`` arguments: no dashboard, no log forwarding; a local instance listens on
    loopback only. A remote cluster's own settings are its operator's (docs/cluster.md)."""
    if address != "local":
        return {"address": address, "log_to_driver": False}
    return {
        "address": "local",
        "num_cpus": num_cpus,
        "include_dashboard": False,
        "log_to_driver": False,
        "configure_logging": False,
        "object_store_memory": LOCAL_OBJECT_STORE,
        "_node_ip_address": "127.0.0.1",
    }


class EmbedWorker:
    """One Ray actor: the model loaded once, on CUDA where its node has a GPU (onnx.session
    puts CUDA first), embedding whole parts with the local path's own length batching."""

    def __init__(self, model_id: str, threads: int) -> None:
        self.embedder = Embedder(threads=threads)
        if self.embedder.model_id != model_id:
            raise ValueError(
                f"worker has model {self.embedder.model_id}, the driver {model_id}: install "
                "the same code-evidence version on every node"
            )
        self.provider = self.embedder.provider()

    def info(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "provider": self.provider}

    def embed(self, texts: list[str]) -> np.ndarray:
        """float16, as the cache stores them: half the bytes back to the driver."""
        return self.embedder.embed(texts).astype(np.float16)


@dataclass
class _Run:
    """One ``embed_stream``'s bookkeeping: parts waiting, parts in flight (ref -> actor,
    keys), pings to actors that died (ref -> actor), and which actors take work."""

    queue: deque[list[str]]
    actors: int
    inflight: dict[Any, tuple[int, list[str]]] = field(default_factory=dict)
    probes: dict[Any, int] = field(default_factory=dict)
    part_failures: dict[str, int] = field(default_factory=dict)
    actor_failures: dict[int, int] = field(default_factory=dict)
    ready: set[int] = field(default_factory=set)
    load: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.ready = set(range(self.actors))
        self.load = dict.fromkeys(self.ready, 0)


class EmbeddingPool:
    """Actors on a Ray cluster, started on first use: an index pass with nothing to embed
    never starts Ray, and one with work starts it only after BM25 is committed, so lexical
    answers never wait for the cluster. ``address``: ``local`` or ``ray://HOST:PORT`` to
    connect to (and disconnect from on ``close``); None uses the Ray this process already
    initialised. ``actors``: how many (default: one per ``threads`` CPUs of the cluster, plus
    one per GPU, which those actors take whole)."""

    def __init__(
        self,
        model_id: str,
        actors: int | None = None,
        threads: int = 1,
        part_texts: int = PART_TEXTS,
        address: str | None = None,
        num_cpus: int | None = None,
    ) -> None:
        self.ray: Any = None  # imported on start: importing Ray takes seconds
        self.model_id, self.count, self.threads = model_id, actors, max(1, threads)
        self.part_texts = max(1, part_texts)
        self.address, self.num_cpus = address, num_cpus
        self.actors: list[Any] = []
        self.stats = ClusterStats()
        self._owns_ray = False
        self._retryable: tuple[type[BaseException], ...] = ()

    def start(self) -> None:
        """Connect (or start the local instance), make the actors and wait until each has
        loaded the model."""
        if self.actors:
            return
        self.ray = import_ray(local=self.address == "local")
        self._retryable = _retryable(self.ray)
        if self.address is not None and not self.ray.is_initialized():
            try:
                self.ray.init(**init_args(self.address, self.num_cpus))
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ClusterError(f"cannot reach the Ray cluster {self.address}: {exc}") from exc
            self._owns_ray = True
        resources = self.ray.cluster_resources()
        gpus = int(resources.get("GPU", 0))
        cpus = int(resources.get("CPU", 1))
        count = self.count or max(1, gpus + max(0, cpus - gpus) // self.threads)
        remote = self.ray.remote(EmbedWorker)
        self.actors = [
            remote.options(
                num_cpus=1 if i < gpus else self.threads,
                num_gpus=1 if i < gpus else 0,
                max_restarts=MAX_RESTARTS,
                max_task_retries=0,
            ).remote(self.model_id, self.threads)
            for i in range(count)
        ]
        self.stats.actors = count
        try:
            infos = self.ray.get([a.info.remote() for a in self.actors])
        except self.ray.exceptions.RayError as exc:
            self.close()
            raise ClusterError(f"embedding workers failed to start: {exc}") from exc
        self.stats.providers = [i["provider"] for i in infos]

    def worker_pids(self) -> list[int]:
        self.start()
        return [i["pid"] for i in self.ray.get([a.info.remote() for a in self.actors])]

    def embed_stream(
        self, cache: EmbeddingCache, texts_by_key: Mapping[str, str]
    ) -> Generator[dict[str, np.ndarray], None, None]:
        """Embed the texts in parts, in the mapping's order (the caller's priority order),
        and yield each part's vectors once they are in ``cache``. Closing the iterator early
        (an interrupted pass) cancels what is in flight; what was yielded stays cached."""
        keys = list(texts_by_key)
        if not keys:
            return
        self.start()
        # A small run is still spread over every actor (two parts each), down to 16 texts.
        size = max(
            min(16, self.part_texts),
            min(self.part_texts, -(-len(keys) // (2 * max(1, len(self.actors))))),
        )
        run = _Run(deque(keys[i : i + size] for i in range(0, len(keys), size)), len(self.actors))
        try:
            while run.queue or run.inflight:
                self._dispatch(run, texts_by_key)
                waiting = [*run.inflight, *run.probes]
                if not waiting:
                    raise ClusterError("every embedding worker was lost; run again to resume")
                ref = self.ray.wait(waiting, num_returns=1)[0][0]
                if ref in run.probes:
                    self._probed(run, ref)
                    continue
                actor, part = run.inflight.pop(ref)
                run.load[actor] -= 1
                try:
                    result = self.ray.get(ref)
                except self._retryable as exc:
                    self._lost(run, actor, part, exc)
                    continue
                except self.ray.exceptions.RayError as exc:  # the work itself failed
                    raise ClusterError(f"an embedding worker failed: {exc}") from exc
                stored = self._check(result, part)
                cache.put_many(stored)
                self.stats.parts_done += 1
                self.stats.texts_embedded += len(part)
                self.stats.bytes_received += int(result.nbytes)
                yield stored
        finally:
            for ref in run.inflight:
                with contextlib.suppress(Exception):
                    self.ray.cancel(ref)

    def _dispatch(self, run: _Run, texts_by_key: Mapping[str, str]) -> None:
        """Top every ready actor up to one running and ``PREFETCH`` queued parts."""
        for i in sorted(run.ready, key=lambda a: run.load[a]):
            while run.queue and run.load[i] <= PREFETCH:
                part = run.queue.popleft()
                texts = [texts_by_key[k] for k in part]
                run.inflight[self.actors[i].embed.remote(texts)] = (i, part)
                run.load[i] += 1
                self.stats.parts_sent += 1
                self.stats.bytes_sent += sum(len(t.encode("utf-8", "replace")) for t in texts)

    def _lost(self, run: _Run, actor: int, part: list[str], exc: BaseException) -> None:
        """The part's actor died before answering: the part goes back to the head of the
        queue for the other actors, and the actor gets no more work until a ping says Ray
        has restarted it (``_probed``)."""
        self.stats.parts_resent += 1
        log.warning("embedding worker %d lost (%s); its part is sent again", actor, exc)
        run.part_failures[part[0]] = run.part_failures.get(part[0], 0) + 1
        if run.part_failures[part[0]] >= MAX_PART_FAILURES:
            raise ClusterError(f"a part failed on {MAX_PART_FAILURES} workers: {exc}") from exc
        run.queue.appendleft(part)
        if actor in run.ready:
            run.ready.discard(actor)
            self._probe(run, actor)

    def _probe(self, run: _Run, actor: int) -> None:
        run.actor_failures[actor] = run.actor_failures.get(actor, 0) + 1
        if run.actor_failures[actor] > MAX_RESTARTS:
            self.stats.actors_lost += 1  # Ray will not restart it again
            return
        run.probes[self.actors[actor].info.remote()] = actor

    def _probed(self, run: _Run, ref: Any) -> None:
        """A ping answered (the actor is back: it takes work again) or failed (ping again,
        until Ray stops restarting it)."""
        actor = run.probes.pop(ref)
        try:
            self.ray.get(ref)
        except self._retryable:
            self._probe(run, actor)
            return
        run.ready.add(actor)

    @staticmethod
    def _check(result: Any, part: list[str]) -> dict[str, np.ndarray]:
        arr = np.asarray(result)
        if arr.shape != (len(part), DIM) or not np.isfinite(arr).all():
            raise ClusterError(f"a worker returned vectors of shape {arr.shape}, not the part's")
        vectors = normalise(arr.astype(np.float32))
        return {key: vectors[i] for i, key in enumerate(part)}

    def close(self) -> None:
        """Kill the actors; disconnect from (or stop) a Ray this pool connected to."""
        if self.ray is None:
            return
        for actor in self.actors:
            with contextlib.suppress(Exception):
                self.ray.kill(actor)
        self.actors = []
        if self._owns_ray:
            self.ray.shutdown()
            self._owns_ray = False


@contextlib.contextmanager
def cluster_pool(spec: str, model_id: str, actors: int | None = None) -> Iterator[EmbeddingPool]:
    """The pool for ``--cluster SPEC``, closed after. Ray is only imported here; the cluster
    is reached on the pool's first use. A Ray already initialised in this process (a test, a
    notebook) is used as it is and left up."""
    address = parse_spec(spec)
    if actors is not None and actors < 1:
        raise ClusterError("--cluster-actors must be 1 or more")
    if importlib.util.find_spec("ray") is None:  # say so now, not after the lexical pass
        import_ray()
    pool = EmbeddingPool(model_id, actors, address=address)
    try:
        yield pool
    finally:
        pool.close()


def _retryable(ray: Any) -> tuple[type[BaseException], ...]:
    """Errors that mean the worker, not the work, failed: the part is sent again."""
    names = (
        "RayActorError",
        "ActorUnavailableError",
        "WorkerCrashedError",
        "NodeDiedError",
        "ObjectLostError",
        "OutOfMemoryError",
    )
    return tuple(getattr(ray.exceptions, n) for n in names if hasattr(ray.exceptions, n))
