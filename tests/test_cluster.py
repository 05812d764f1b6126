"""`index --cluster` (models/cluster.py) on a real local Ray: the vectors are the local run's,
a worker killed mid-run costs only its unfinished part, and an interrupted run resumes without
embedding anything twice. Ray comes with the [cluster] extra, which `make install` installs;
only the first test runs without it, the others skip saying so, except in CI (.ci/run sets
CODE_EVIDENCE_REQUIRE_RAY=1), where a missing Ray fails them."""

from __future__ import annotations

import ipaddress
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from code_evidence import cli
from code_evidence.api import FindRequest
from code_evidence.engine import Engine
from code_evidence.index.plan import vector_target
from code_evidence.models import cluster
from code_evidence.models.embed_cache import EmbeddingCache, text_key
from code_evidence.paths import CACHE_DIR_ENV
from support import ROOT
from support.procnet import socket_rows

# Vectors through Ray against the same texts embedded here: the same model on the same kind of
# CPU, batched differently (parts, not blocks of 256), then stored as float16. On CUDA workers
# the difference is larger and docs/cluster.md states it.
TOLERANCE = 2e-3
# Asked with depth "deep": an interactive answer's cross-encoder stops at a time budget, so
# only deep answers are the same from run to run on a busy machine.
QUESTIONS = ("where is the oauth state checked", "discount_for voucher code", "delete a file")


@pytest.fixture(scope="module")
def ray_local() -> Iterator[Any]:
    """A real Ray instance on this machine, two CPUs, taken down after the module. Workers
    import this checkout's engine (PYTHONPATH reaches them through the raylet)."""
    os.environ.update({**cluster.RAY_ENV, **cluster.LOCAL_ENV})
    if os.environ.get("CODE_EVIDENCE_REQUIRE_RAY") == "1":  # CI (.ci/run): never skip
        import ray
    else:
        ray = pytest.importorskip(
            "ray", reason="Ray (the [cluster] extra) is not installed: pip install -e '.[cluster]'"
        )
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "server"), old]))
    ray.init(**cluster.init_args("local", num_cpus=2))
    try:
        yield ray
    finally:
        ray.shutdown()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def _cached(cache_dir: Path, keys: list[str]) -> dict[str, np.ndarray]:
    with EmbeddingCache(cache_dir / "embeddings.sqlite") as cache:
        return cache.get_many(keys)


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The shop project indexed without Ray, in a cache of its own: what a cluster run must
    reproduce."""
    from support.project import git, init_repo, write_project

    root = tmp_path_factory.mktemp("shop-local")
    write_project(root)
    init_repo(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    cache_dir = tmp_path_factory.mktemp("cache-local")
    saved = os.environ[CACHE_DIR_ENV]
    os.environ[CACHE_DIR_ENV] = str(cache_dir)
    try:
        with Engine(root, cache_dir / "idx") as eng:
            eng.index()
            model = eng.embedder.model_id
            keys = [text_key(t, model) for t in eng.embedding_texts()]
            top = {
                q: [r.path for r in eng.find(FindRequest(q, limit=5, depth="deep")).results]
                for q in QUESTIONS
            }
    finally:
        os.environ[CACHE_DIR_ENV] = saved
    return {"root": root, "model": model, "vectors": _cached(cache_dir, keys), "top": top}


def test_without_ray_the_error_says_how_to_install(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    if sys.modules.get("ray") is not None:
        pytest.skip("Ray is already loaded in this process; it cannot be unloaded")
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` meets without the extra
    args = ["index", "--workspace", str(project), "--index-dir", str(tmp_path / "i"), "--quiet"]
    assert cli.main([*args, "--cluster", "ray"]) == 2
    assert "pip install 'code-evidence[cluster]'" in capsys.readouterr().err
    assert cli.main([*args, "--cluster", "tcp://x"]) == 2
    assert cli.main([*args, "--cluster-actors", "2"]) == 2  # without --cluster
    assert "--cluster-actors needs --cluster" in capsys.readouterr().err
    assert cli.main([*args, "--cluster", "ray", "--cluster-actors", "0"]) == 2
    assert "must be 1 or more" in capsys.readouterr().err


def _listening(pid: int) -> list[str]:
    """Local addresses of the TCP sockets ``pid`` listens on (from /proc)."""
    return [
        _address(cols[1].split(":")[0])
        for _table, cols in socket_rows(pid, ("tcp", "tcp6"))
        if cols[3] == "0A"  # LISTEN
    ]


def _address(hexed: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """/proc/net's hex address: 32-bit words in host (little-endian) order."""
    raw = b"".join(bytes.fromhex(hexed[i : i + 8])[::-1] for i in range(0, len(hexed), 8))
    if len(raw) == 4:
        return ipaddress.IPv4Address(raw)
    v6 = ipaddress.IPv6Address(raw)
    return v6.ipv4_mapped or v6


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_local_instance_is_private(ray_local: Any, local_run: dict[str, Any]) -> None:
    """`--cluster ray` reports nothing and listens on loopback only: its node address is
    127.0.0.1, no dashboard runs, and every listening socket of its processes (GCS, raylet,
    agents, the actors, this driver) is bound to loopback."""
    assert os.environ["RAY_USAGE_STATS_ENABLED"] == "0"
    assert [n["NodeManagerAddress"] for n in ray_local.nodes()] == ["127.0.0.1"]
    node = ray_local._private.worker._global_node
    assert not node.address_info.get("webui_url")
    pool = cluster.EmbeddingPool(local_run["model"], actors=1)
    try:
        pids = [os.getpid(), *pool.worker_pids()]
        pids += [p.process.pid for procs in node.all_processes.values() for p in procs]
        addresses = {a for pid in pids for a in _listening(pid)}
    finally:
        pool.close()
    assert addresses and all(a.is_loopback for a in addresses), addresses


def test_cluster_vectors_match_a_local_run(
    ray_local: Any, local_run: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    root = local_run["root"]
    idx = tmp_path / "idx"
    argv = ["index", "--workspace", str(root), "--index-dir", str(idx), "--quiet"]
    assert cli.main([*argv, "--cluster", "ray", "--cluster-actors", "2"]) == 0
    got = _cached(tmp_path / "cache", list(local_run["vectors"]))
    assert set(got) == set(local_run["vectors"])
    diff = max(float(np.abs(got[k] - v).max()) for k, v in local_run["vectors"].items())
    assert diff <= TOLERANCE
    with Engine(root, idx) as eng:
        assert len(eng.parts.vectors) == vector_target(eng.reader)  # tests are BM25 only
        for q, paths in local_run["top"].items():
            assert [
                r.path for r in eng.find(FindRequest(q, limit=5, depth="deep")).results
            ] == paths


def test_a_worker_killed_mid_run_costs_only_its_part(
    ray_local: Any, local_run: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    pool = cluster.EmbeddingPool(local_run["model"], actors=2, part_texts=2)
    victim = pool.worker_pids()[0]
    killed: list[int] = []

    def kill_once(stage: str, done: int, total: int) -> None:
        if stage == "embed" and not killed:  # both actors hold parts now
            os.kill(victim, signal.SIGKILL)
            killed.append(done)

    try:
        with Engine(local_run["root"], tmp_path / "idx") as eng:
            report = eng.index(progress=kill_once, pool=pool)
            assert len(eng.parts.vectors) == vector_target(eng.reader)  # tests are BM25 only
    finally:
        pool.close()
    total = len(local_run["vectors"])
    assert killed and pool.stats.parts_resent >= 1
    # Every text finished exactly once: the killed actor's part was sent again, never a
    # finished one.
    assert report.embedded == pool.stats.texts_embedded == total
    assert pool.stats.parts_done == pool.stats.parts_sent - pool.stats.parts_resent
    got = _cached(tmp_path / "cache", list(local_run["vectors"]))
    assert max(float(np.abs(got[k] - v).max()) for k, v in local_run["vectors"].items()) <= (
        TOLERANCE
    )


def test_an_interrupted_run_resumes_without_embedding_twice(
    ray_local: Any, local_run: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    cancel = threading.Event()

    def stop_after_first(stage: str, done: int, total: int) -> None:
        if stage == "embed":
            cancel.set()  # the driver interrupted after the first finished part

    pool = cluster.EmbeddingPool(local_run["model"], actors=2, part_texts=2)
    try:
        with Engine(local_run["root"], tmp_path / "idx") as eng:
            first = eng.index(progress=stop_after_first, cancel=cancel, pool=pool)
        assert first.cancelled and 0 < first.embedded < len(local_run["vectors"])
        assert len(_cached(tmp_path / "cache", list(local_run["vectors"]))) == first.embedded
        with Engine(local_run["root"], tmp_path / "idx") as eng:
            second = eng.index(pool=pool)
            assert len(eng.parts.vectors) == vector_target(eng.reader)  # tests are BM25 only
    finally:
        pool.close()
    assert not second.cancelled
    assert first.embedded + second.embedded == len(local_run["vectors"])
