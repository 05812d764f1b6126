"""A node lost mid-run (models/cluster.py): two real raylets on this machine
(``ray.cluster_utils.Cluster``), one actor on each; the second node is removed after the first
part arrived. Its unfinished parts go to the actor left, every text is embedded once and
cached, and the vectors are the local model's. Skips without Ray like tests/test_cluster.py,
and fails instead in CI (CODE_EVIDENCE_REQUIRE_RAY=1)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from code_evidence.models import cluster
from code_evidence.models.embed_cache import EmbeddingCache, to_stored
from code_evidence.models.embedder import Embedder
from support import ROOT


@pytest.fixture
def two_nodes() -> Iterator[tuple[Any, Any]]:
    os.environ.update({**cluster.RAY_ENV, **cluster.LOCAL_ENV})
    if os.environ.get("CODE_EVIDENCE_REQUIRE_RAY") != "1":
        pytest.importorskip("ray", reason="Ray (the [cluster] extra) is not installed")
    import ray
    from ray.cluster_utils import Cluster

    if ray.is_initialized():  # another module's instance: this test needs its own
        ray.shutdown()
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "server"), old]))
    nodes = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
    )
    try:
        side = nodes.add_node(num_cpus=1)
        ray.init(address=nodes.address, log_to_driver=False)
        yield nodes, side
    finally:
        ray.shutdown()
        nodes.shutdown()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def test_a_lost_node_costs_only_its_unfinished_parts(
    two_nodes: tuple[Any, Any], tmp_path: Path
) -> None:
    nodes, side = two_nodes
    texts = {f"k{i}": f"def price_{i}(qty):\n    return qty * {i} + {i * i}\n" for i in range(64)}
    pool = cluster.EmbeddingPool(Embedder().model_id, actors=2, part_texts=8)
    got: dict[str, np.ndarray] = {}
    try:
        pool.start()  # one CPU a node: one actor on each
        with EmbeddingCache(tmp_path / "c.sqlite") as cache:
            for stored in pool.embed_stream(cache, texts):
                if not got:
                    nodes.remove_node(side)
                got.update(stored)
            cached = cache.get_many(list(texts))
    finally:
        pool.close()
    stats = pool.stats
    assert stats.parts_resent >= 1  # the lost node's actor held parts
    assert stats.texts_embedded == len(texts) == len(got) == len(cached)
    assert stats.parts_done == stats.parts_sent - stats.parts_resent
    local = Embedder().embed(list(texts.values()))
    assert max(float(np.abs(to_stored(local[i]) - got[k]).max()) for i, k in enumerate(texts)) <= (
        2e-3
    )
