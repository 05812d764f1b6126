from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from code_evidence.engine import Engine
from code_evidence.index import vectors
from code_evidence.index.vectors import VectorIndex

DIM = 16


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


def test_empty_index_search_returns_nothing(tmp_path: Path) -> None:
    index = VectorIndex(tmp_path / "vectors.usearch", DIM)
    assert len(index) == 0
    assert not index.rebuilt
    assert index.search(np.ones(DIM, dtype=np.float32), 5) == []


def test_search_order_and_similarity(tmp_path: Path, rng: np.random.Generator) -> None:
    index = VectorIndex(tmp_path / "v.usearch", DIM)
    base = unit(rng, 1)[0]
    noise = unit(rng, 1)[0]
    # Increasing amounts of noise: similarity to ``base`` falls with the key.
    vecs = np.stack([base + w * noise for w in (0.0, 0.3, 0.8, 2.0, 5.0)])
    index.add([10, 11, 12, 13, 14], vecs)
    hits = index.search(base, 3)
    assert [key for key, _ in hits] == [10, 11, 12]
    assert hits[0][1] == pytest.approx(1.0, abs=1e-3)
    sims = [sim for _, sim in hits]
    assert sims == sorted(sims, reverse=True)
    assert len(index.search(base, 100)) == 5  # k past the size: everything, no padding
    assert index.search(base, 0) == []


def test_add_replaces_existing_key(tmp_path: Path, rng: np.random.Generator) -> None:
    index = VectorIndex(tmp_path / "v.usearch", DIM)
    a, b = unit(rng, 2)
    index.add([1], a[None, :])
    index.add([1], b[None, :])
    assert len(index) == 1
    [(key, sim)] = index.search(b, 5)
    assert key == 1 and sim == pytest.approx(1.0, abs=1e-3)
    # A repeated key within one call keeps its last vector.
    index.add([2, 2], np.stack([a, b]))
    assert len(index) == 2
    assert {k for k, s in index.search(b, 5) if s > 0.999} == {1, 2}


def test_remove(tmp_path: Path, rng: np.random.Generator) -> None:
    index = VectorIndex(tmp_path / "v.usearch", DIM)
    vecs = unit(rng, 4)
    index.add([1, 2, 3, 4], vecs)
    index.remove([2, 99])  # an absent key is ignored
    index.remove([])
    assert len(index) == 3
    assert 2 not in index and 1 in index
    assert 2 not in [key for key, _ in index.search(vecs[1], 10)]
    assert sorted(index.keys().tolist()) == [1, 3, 4]


def test_save_load_round_trip(tmp_path: Path, rng: np.random.Generator) -> None:
    path = tmp_path / "nested" / "v.usearch"
    index = VectorIndex(path, DIM)
    vecs = unit(rng, 20)
    index.add(list(range(100, 120)), vecs)
    index.remove([105])
    index.save()
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "v.usearch",
        "v.usearch.log",
    ]  # no temp
    loaded = VectorIndex(path, DIM)
    assert not loaded.rebuilt
    assert len(loaded) == 19
    assert 105 not in loaded and 119 in loaded
    assert loaded.search(vecs[7], 1)[0][0] == 107
    # Saving over an existing file works too.
    loaded.add([1], vecs[:1])
    loaded.save()
    assert len(VectorIndex(path, DIM)) == 20


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "wrong_dim"])
def test_damaged_file_starts_empty_and_flags_rebuild(
    tmp_path: Path, rng: np.random.Generator, damage: str
) -> None:
    path = tmp_path / "v.usearch"
    good = VectorIndex(path, DIM)
    good.add(list(range(50)), unit(rng, 50))
    good.save()
    data = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"\x00not an index\xff" * 100)
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    index = VectorIndex(path, DIM * 2 if damage == "wrong_dim" else DIM)
    assert index.rebuilt
    assert len(index) == 0
    assert index.search(np.ones(index.dim, dtype=np.float32), 3) == []
    # Usable afterwards: the caller refills it and saves over the damaged file.
    index.add([1], np.ones((1, index.dim), dtype=np.float32))
    index.save()
    assert len(VectorIndex(path, index.dim)) == 1


def test_graph_search_path(
    tmp_path: Path, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "EXACT_SEARCH_MAX", 0)  # force the HNSW path
    index = VectorIndex(tmp_path / "v.usearch", DIM)
    vecs = unit(rng, 300)
    index.add(list(range(300)), vecs)
    for i in (0, 150, 299):
        key, sim = index.search(vecs[i], 5)[0]
        assert key == i and sim == pytest.approx(1.0, abs=1e-3)


def test_bad_input_is_rejected_clearly(tmp_path: Path, rng: np.random.Generator) -> None:
    index = VectorIndex(tmp_path / "v.usearch", DIM)
    with pytest.raises(ValueError):
        index.add([1, 2], unit(rng, 3))
    with pytest.raises(ValueError):
        index.add([-1], unit(rng, 1))
    with pytest.raises(ValueError):
        index.add([1], np.ones((1, DIM + 1), dtype=np.float32))
    index.add([1], unit(rng, 1))
    with pytest.raises(ValueError):
        index.search(np.ones(DIM + 1, dtype=np.float32), 3)
    index.add([], np.zeros((0, DIM), dtype=np.float32))
    assert len(index) == 1
    assert -1 not in index and "1" not in index and True not in index


def state(index: VectorIndex) -> dict[int, tuple[int, ...]]:
    """Each key with its nearest neighbour ranking: equal states answer alike."""
    return {
        int(k): tuple(key for key, _ in index.search(index._index[int(k)], 5))
        for k in sorted(index.keys())
    }


def test_a_small_save_appends_to_the_journal_and_reopening_replays_it(
    tmp_path: Path, rng: np.random.Generator
) -> None:
    path = tmp_path / "vectors.usearch"
    index = VectorIndex(path, DIM)
    index.add(list(range(200)), unit(rng, 200))
    index.save()
    assert index.full_saves == 1
    whole = path.read_bytes()
    index.remove([3, 4])
    index.add([5, 500], unit(rng, 2))  # a replaced vector and a new one
    index.save()
    index.save()  # nothing new: nothing written
    assert index.full_saves == 1 and path.read_bytes() == whole
    reopened = VectorIndex(path, DIM)
    assert not reopened.rebuilt
    assert sorted(reopened.keys()) == sorted(index.keys())
    assert 3 not in reopened and 500 in reopened
    assert np.allclose(reopened._index[5], index._index[5], atol=1e-3)
    assert state(reopened) == state(index)


def test_a_torn_record_is_dropped_and_a_stale_journal_ignored(
    tmp_path: Path, rng: np.random.Generator
) -> None:
    path = tmp_path / "vectors.usearch"
    index = VectorIndex(path, DIM)
    index.add(list(range(50)), unit(rng, 50))
    index.save()
    index.add([100], unit(rng, 1))
    index.save()
    index.add([101], unit(rng, 1))
    index.save()
    journal = index.journal
    journal.write_bytes(journal.read_bytes()[:-5])  # a crash in the middle of the last append
    reopened = VectorIndex(path, DIM)
    assert 100 in reopened and 101 not in reopened and len(reopened) == 51

    # The file deleted for a rebuild (parts.rebuild_vectors): its journal means nothing now.
    path.unlink()
    fresh = VectorIndex(path, DIM)
    assert len(fresh) == 0
    fresh.add([7], unit(rng, 1))
    fresh.save()
    assert fresh.full_saves == 1 and len(VectorIndex(path, DIM)) == 1


def test_the_file_is_rewritten_once_the_journal_outgrows_its_share(
    tmp_path: Path, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "JOURNAL_MIN_BYTES", 1_000)
    path = tmp_path / "vectors.usearch"
    index = VectorIndex(path, DIM)
    index.add(list(range(100)), unit(rng, 100))
    index.save()
    index.add([1000], unit(rng, 1))
    index.save()
    assert index.full_saves == 1  # one small record
    index.add(list(range(2000, 2100)), unit(rng, 100))
    index.save()
    assert index.full_saves == 2  # past the share: the whole file, and an empty journal
    assert index.journal.stat().st_size == vectors._HEAD.size
    assert state(VectorIndex(path, DIM)) == state(index)


def test_a_saved_file_does_not_rewrite_the_vector_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    funcs = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(40))
    (ws / "mod.py").write_text(funcs)
    with Engine(ws, tmp_path / "idx", use_git=False) as eng:
        eng.index()
        before = eng.parts.vectors.full_saves
        whole = eng.parts.vectors.path.read_bytes()
        (ws / "mod.py").write_text(funcs.replace("x + 3\n", "x - 3\n"))
        report = eng.index(paths=["mod.py"])
        assert report.chunks_removed == report.chunks_added == 1
        assert eng.parts.vectors.full_saves == before
        assert eng.parts.vectors.path.read_bytes() == whole  # the change went to the journal
    with Engine(ws, tmp_path / "idx", use_git=False) as eng:
        assert len(eng.parts.vectors) == 40
        assert eng.state == "ready"
