"""Embedding cache files: the vectors a workspace needs, moved between machines.

``code-evidence cache export`` writes, and ``cache import`` reads, one zip file of plain data
(no pickle, nothing executed on reading):

- ``manifest.json``: format, version, model id, dimensions, dtype, entry count, and the size
  and sha256 of each other member;
- ``texts.jsonl``: one JSON string a line, the embedded text of each entry;
- ``vectors.npy``: an (entries, 384) float16 array, read with ``allow_pickle=False``.

The cache key of an entry is not stored: it follows from the model id and the text
(``embed_cache.text_key``), so a file cannot put a vector under another text's key. Import
checks everything before writing anything: members, sizes, checksums, model id, dimensions,
that the vectors are finite unit vectors, and, re-embedding a random sample of the texts with
the local model, that the vectors belong to their texts. A file failing any check is refused
whole (docs/cluster.md says what the sample does and does not prove).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..paths import create_private_file
from .embed_cache import EmbeddingCache, text_key, to_stored
from .embedder import DIM, Embedder, normalise

FORMAT = "code-evidence-embeddings"
VERSION = 1
MEMBERS = ("manifest.json", "texts.jsonl", "vectors.npy")
# Texts re-embedded on import; the sample's vectors must match the file's to this cosine.
# A local re-run gives 0.9999+ (float16 rounding); vectors of another text score far lower.
SAMPLE = 32
MIN_COSINE = 0.99
MAX_MANIFEST = 1 << 20
MAX_ENTRIES = 20_000_000


class CacheFileError(ValueError):
    """A cache file that is not one, is damaged, or does not match this model: refused whole."""


@dataclass(frozen=True)
class ExportReport:
    entries: int
    not_embedded: int  # chunk texts of the workspace the cache has no vector for yet
    bytes: int


@dataclass(frozen=True)
class ImportReport:
    entries: int
    new: int  # entries the cache did not hold before
    sampled: int
    min_cosine: float
    max_abs_diff: float


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def export_file(
    out: Path, texts: Iterable[str], cache: EmbeddingCache, model_id: str
) -> ExportReport:
    """Write the cached vectors of ``texts`` to ``out`` (atomically: a reader never sees half
    a file; 0600, as everything this tool writes). Texts the cache lacks are left out and
    counted."""
    wanted = list(dict.fromkeys(texts))
    keys = [text_key(t, model_id) for t in wanted]
    found = cache.get_many(keys)
    kept = [(t, found[k]) for t, k in zip(wanted, keys, strict=True) if k in found]
    matrix = np.stack([v for _, v in kept]) if kept else np.zeros((0, DIM), np.float32)
    buf = io.BytesIO()
    np.save(buf, matrix.astype(np.float16), allow_pickle=False)
    members = {
        "texts.jsonl": "".join(json.dumps(t) + "\n" for t, _ in kept).encode("ascii"),
        "vectors.npy": buf.getvalue(),
    }
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "model_id": model_id,
        "dim": DIM,
        "dtype": "float16",
        "entries": len(kept),
        "members": {n: {"bytes": len(d), "sha256": _sha256(d)} for n, d in members.items()},
    }
    out = Path(out)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        create_private_file(tmp)  # the file is a copy of the code: the user's alone, 0600
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("manifest.json", json.dumps(manifest, indent=1))
            for name, data in members.items():
                zf.writestr(name, data)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return ExportReport(len(kept), len(wanted) - len(kept), out.stat().st_size)


def _read_members(path: Path) -> tuple[dict[str, object], bytes, bytes]:
    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise CacheFileError(f"{path} is not an embedding cache file: {exc}") from exc
    with zf:
        names = sorted(i.filename for i in zf.infolist())
        if names != sorted(MEMBERS):
            raise CacheFileError(f"{path}: expected members {list(MEMBERS)}, found {names}")
        if zf.getinfo("manifest.json").file_size > MAX_MANIFEST:
            raise CacheFileError(f"{path}: manifest too large")
        try:
            manifest = json.loads(zf.read("manifest.json"))
        except (ValueError, zipfile.BadZipFile) as exc:
            raise CacheFileError(f"{path}: manifest is not JSON: {exc}") from exc
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise CacheFileError(f"{path}: not a {FORMAT} file")
        if manifest.get("version") != VERSION:
            raise CacheFileError(f"{path}: format version {manifest.get('version')!r}, not 1")
        declared = manifest.get("members")
        data: dict[str, bytes] = {}
        for name in ("texts.jsonl", "vectors.npy"):
            entry = declared.get(name) if isinstance(declared, dict) else None
            if not isinstance(entry, dict) or not isinstance(entry.get("bytes"), int):
                raise CacheFileError(f"{path}: manifest does not describe {name}")
            if zf.getinfo(name).file_size != entry["bytes"]:
                raise CacheFileError(f"{path}: {name} is not the size the manifest says")
            try:
                data[name] = zf.read(name)
            except (zipfile.BadZipFile, OSError) as exc:  # zip CRC mismatch among them
                raise CacheFileError(f"{path}: {name} is damaged: {exc}") from exc
            if _sha256(data[name]) != entry.get("sha256"):
                raise CacheFileError(f"{path}: {name} does not match its checksum")
    return manifest, data["texts.jsonl"], data["vectors.npy"]


def read_file(path: Path, model_id: str) -> tuple[list[str], np.ndarray]:
    """The texts and unit vectors of a cache file, every structural check passed."""
    manifest, texts_raw, vectors_raw = _read_members(path)
    if manifest.get("model_id") != model_id:
        raise CacheFileError(
            f"{path}: made with model {manifest.get('model_id')!r}, this one is {model_id!r}"
        )
    if manifest.get("dim") != DIM or manifest.get("dtype") != "float16":
        raise CacheFileError(f"{path}: vectors are not {DIM} float16 dimensions")
    entries = manifest.get("entries")
    if not isinstance(entries, int) or not 0 <= entries <= MAX_ENTRIES:
        raise CacheFileError(f"{path}: bad entry count {entries!r}")
    try:
        vectors = np.load(io.BytesIO(vectors_raw), allow_pickle=False)
        texts = [json.loads(line) for line in texts_raw.decode("ascii").splitlines()]
    except (ValueError, UnicodeDecodeError) as exc:
        raise CacheFileError(f"{path}: members are not readable data: {exc}") from exc
    if vectors.dtype != np.float16 or vectors.shape != (entries, DIM):
        raise CacheFileError(f"{path}: vectors are {vectors.dtype} {vectors.shape}")
    if len(texts) != entries or not all(isinstance(t, str) for t in texts):
        raise CacheFileError(f"{path}: {len(texts)} texts for {entries} vectors")
    wide = vectors.astype(np.float32)
    if not np.isfinite(wide).all() or (
        entries and np.abs(np.linalg.norm(wide, axis=1) - 1).max() > 1e-2
    ):
        raise CacheFileError(f"{path}: vectors are not finite unit vectors")
    return texts, normalise(wide)


def import_file(
    path: Path,
    cache: EmbeddingCache,
    embedder: Embedder,
    sample: int = SAMPLE,
    rng: random.Random | None = None,
) -> ImportReport:
    """Check ``path`` (see the module docstring) and put its vectors into ``cache``; nothing
    is written unless every check passes."""
    texts, vectors = read_file(path, embedder.model_id)
    picks = (rng or random.SystemRandom()).sample(range(len(texts)), min(sample, len(texts)))
    min_cos, max_diff = 1.0, 0.0
    if picks:
        fresh = np.stack([to_stored(v) for v in embedder.embed([texts[i] for i in picks])])
        cosines = np.einsum("ij,ij->i", fresh, vectors[picks])
        min_cos = float(cosines.min())
        max_diff = float(np.abs(fresh - vectors[picks]).max())
        if min_cos < MIN_COSINE:
            raise CacheFileError(
                f"{path}: a sampled vector does not belong to its text (cosine {min_cos:.3f} "
                f"< {MIN_COSINE}); the file is refused"
            )
    keys = [text_key(t, embedder.model_id) for t in texts]
    before = cache.get_many(keys)
    cache.put_many({k: vectors[i] for i, k in enumerate(keys)})
    new = len(set(keys) - set(before))
    return ImportReport(len(texts), new, len(picks), min_cos, max_diff)
