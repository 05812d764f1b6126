"""`cache export` / `cache import` (models/embed_transfer.py): a workspace's vectors move between
machines as plain data, and a file that is damaged, tampered with or made by another model is
refused whole, before anything reaches the cache."""

from __future__ import annotations

import io
import json
import random
import zipfile
from pathlib import Path

import numpy as np
import pytest

from code_evidence import cli
from code_evidence.engine import Engine
from code_evidence.models import embed_transfer
from code_evidence.models.embed_cache import EmbeddingCache, text_key
from code_evidence.models.embed_transfer import CacheFileError, export_file, import_file
from code_evidence.paths import CACHE_DIR_ENV


@pytest.fixture
def exported(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The shop project indexed with a cold cache of its own, and its vectors exported."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache-a"))
    out = tmp_path / "shop.cevec"
    with Engine(project, tmp_path / "idx-a") as eng:
        eng.index()
        texts = eng.embedding_texts()
        model = eng.embedder.model_id
        report = export_file(out, texts, eng.cache, model)
        vectors = eng.cache.get_many([text_key(t, model) for t in texts])
        embedder = eng.embedder
    assert report.entries == len(texts) > 10 and report.not_embedded == 0
    assert out.stat().st_mode & 0o777 == 0o600  # a copy of the code
    return {"file": out, "texts": texts, "model": model, "vectors": vectors, "embedder": embedder}


def test_round_trip_fills_a_cold_cache(
    exported: dict, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache-b"))
    assert cli.main(["cache", "import", str(exported["file"])]) == 0
    with EmbeddingCache(tmp_path / "cache-b" / "embeddings.sqlite") as cache:
        got = cache.get_many(list(exported["vectors"]))
    assert set(got) == set(exported["vectors"])
    diff = max(float(np.abs(got[k] - v).max()) for k, v in exported["vectors"].items())
    assert diff <= 1e-3  # one float16 rounding, no more
    with Engine(project, tmp_path / "idx-b") as eng:  # a second machine: nothing to embed
        report = eng.index()
    assert report.embedded == 0 and report.vectors_from_cache == report.chunks_total


def test_export_from_the_cli_and_manifest(
    exported: dict, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache-a"))
    out = tmp_path / "cli.cevec"
    args = ["cache", "export", str(out), "--workspace", str(project)]
    assert cli.main([*args, "--index-dir", str(tmp_path / "idx-a")]) == 0
    with zipfile.ZipFile(out) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        vectors = np.load(io.BytesIO(zf.read("vectors.npy")), allow_pickle=False)
    assert manifest["model_id"] == exported["model"] and manifest["dim"] == 384
    assert manifest["entries"] == len(exported["texts"]) == vectors.shape[0]


def _rewrite(src: Path, dst: Path, change: dict, fix_checksums: bool) -> None:
    """Copy a cache file with members replaced; with ``fix_checksums`` the manifest is
    rewritten to match, as a deliberate forger would."""
    with zipfile.ZipFile(src) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members.update(change)
    manifest = json.loads(members["manifest.json"])
    if fix_checksums:
        for name in ("texts.jsonl", "vectors.npy"):
            data = members[name]
            manifest["members"][name] = {
                "bytes": len(data),
                "sha256": embed_transfer._sha256(data),
            }
        members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(dst, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def _vectors(path: Path) -> np.ndarray:
    with zipfile.ZipFile(path) as zf:
        return np.load(io.BytesIO(zf.read("vectors.npy")), allow_pickle=False)


def _npy(matrix: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, matrix, allow_pickle=True)  # object arrays too: the file a forger would send
    return buf.getvalue()


def test_tampered_files_are_refused_whole(exported: dict, tmp_path: Path) -> None:
    src, embedder = exported["file"], exported["embedder"]
    vecs = _vectors(src)
    swapped = vecs.copy()
    swapped[[0, 1]] = swapped[[1, 0]]  # two texts' vectors exchanged: plausible unit vectors
    with zipfile.ZipFile(src) as zf:
        manifest = json.loads(zf.read("manifest.json"))
    other_model = json.dumps({**manifest, "model_id": "another-model@0"}).encode()
    flipped = bytearray(_npy(vecs))
    flipped[-10] ^= 0xFF
    cases = {
        "checksum": ({"vectors.npy": bytes(flipped)}, False, "checksum"),
        "swapped": ({"vectors.npy": _npy(swapped)}, True, "does not belong"),
        "model": ({"manifest.json": other_model}, False, "another-model@0"),
        "extra": ({"payload.pkl": b"\x80\x04N."}, False, "expected members"),
        "pickle": ({"vectors.npy": _npy(np.array([object()], dtype=object))}, True, "readable"),
    }
    for name, (change, fix, message) in cases.items():
        bad = tmp_path / f"{name}.cevec"
        _rewrite(src, bad, change, fix)
        with EmbeddingCache(tmp_path / f"{name}.sqlite") as cache:
            with pytest.raises(CacheFileError, match=message):
                # Every text sampled, so the swap is always caught (the default samples 32).
                import_file(bad, cache, embedder, sample=10_000, rng=random.Random(0))
            assert cache.get_many(list(exported["vectors"])) == {}, name  # nothing written
    (tmp_path / "junk.cevec").write_bytes(b"not a zip at all")
    with EmbeddingCache(tmp_path / "junk.sqlite") as cache, pytest.raises(CacheFileError):
        import_file(tmp_path / "junk.cevec", cache, embedder)


def test_cli_refusal_is_a_clear_error(
    exported: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.cevec"
    _rewrite(exported["file"], bad, {"texts.jsonl": b'"x"\n'}, False)
    code = cli.main(["cache", "import", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and "import refused" in err and "texts.jsonl" in err
