from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from code_evidence.api import Chunk
from code_evidence.models import embedder as embedder_module
from code_evidence.models.embed_cache import (
    CACHE_FILE,
    EmbeddingCache,
    embed_with_cache,
    embedding_key,
    embedding_text,
)
from code_evidence.models.embedder import (
    DIM,
    MAX_TOKENS,
    MODEL_ID,
    MODEL_SHA256,
    TOKENIZER_PATH,
    Embedder,
    default_model_path,
)
from code_evidence.paths import CACHE_DIR_ENV

JSON_CHUNK = (
    "config/loader.py\nload_config\n"
    "def load_config(path):\n"
    "    with open(path) as fh:\n"
    "        return json.load(fh)\n"
)
CIRCLE_CHUNK = (
    "gfx/shapes.py\ndraw_circle\n"
    "def draw_circle(canvas, x, y, radius):\n"
    "    canvas.arc(x, y, radius, 0, 360, fill='red')\n"
)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(threads=2)


def make_chunk(
    path: str = "a/b.py", symbol: str = "f", text: str = "def f():\n    pass\n"
) -> Chunk:
    return Chunk(
        path=path,
        start=1,
        end=2,
        symbol=symbol,
        kind="function",
        language="python",
        text=text,
        hash="h",
    )


# -- Embedder ----------------------------------------------------------------------------------


def test_similar_meaning_is_closer(embedder: Embedder) -> None:
    query = embedder.embed_query("read a JSON config file")
    chunks = embedder.embed([JSON_CHUNK, CIRCLE_CHUNK])
    json_sim, circle_sim = chunks @ query
    assert json_sim > circle_sim + 0.2


def test_vectors_are_unit_float32(embedder: Embedder) -> None:
    out = embedder.embed(["x", "def main():\n    return 0\n", "", "ünïcødé 漢字 🙂"])
    assert out.shape == (4, DIM) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert embedder.embed_query("hello").shape == (DIM,)


def test_empty_input(embedder: Embedder) -> None:
    out = embedder.embed([])
    assert out.shape == (0, DIM) and out.dtype == np.float32


def test_a_texts_vector_does_not_depend_on_the_texts_beside_it(embedder: Embedder) -> None:
    """The cache addresses a vector by its text alone. The model scales its activations per
    run, so texts embedded in one call must not share a run: with a batch, "a" next to a long
    chunk moved by up to 0.03 in a coordinate."""
    texts = ["a", JSON_CHUNK, CIRCLE_CHUNK * 4, "short text", "def g(): return 1 " * 30]
    together = embedder.embed(texts)
    single = np.stack([embedder.embed([t])[0] for t in texts])
    assert np.abs(together - single).max() < 1e-6
    # Output rows follow input order, not the internal length order.
    swapped = embedder.embed(texts[::-1])
    assert np.abs(swapped[::-1] - together).max() < 1e-6
    assert np.abs(embedder.embed(["a", "short text"])[0] - single[0]).max() < 1e-6


def test_texts_run_at_once_give_the_same_vectors() -> None:
    """Two texts at a time (one onnxruntime thread each) write each text's own row: the
    vectors equal one text at a time, in input order, for texts of every length."""
    texts = [f"def f_{i}(x):\n    return x + {i}\n" + "y = 1\n" * (i % 23) for i in range(70)]
    serial = Embedder(threads=1).embed(texts)
    together = Embedder(threads=2).embed(texts)
    assert np.abs(serial - together).max() < 1e-6
    assert len({round(float(v[0]), 6) for v in together}) > 50  # rows differ: not one vector


def test_truncation_overrides_tokenizer_file() -> None:
    small = Embedder(max_tokens=6, threads=1)
    # [CLS] + 4 shared tokens + [SEP]: whatever follows is cut, so the vectors are identical.
    a, b = small.embed(["alpha beta gamma delta epsilon", "alpha beta gamma delta zebra yak"])
    assert np.abs(a - b).max() < 1e-6
    # The file's own setting (128 tokens) would cut both of these; 256 keeps the difference.
    default = Embedder(max_tokens=256, threads=1)
    filler = "word " * 200
    c, d = default.embed([filler + "tail one", filler + "completely different ending here"])
    assert np.abs(c - d).max() > 1e-4


def test_token_ids_are_what_a_text_is_run_on() -> None:
    small = Embedder(max_tokens=6, threads=1)
    cut, short = small.token_ids(["alpha beta gamma delta epsilon zeta", "alpha"])
    assert len(cut) == 6 and cut[0] == 101 and cut[-1] == 102  # [CLS] ... [SEP], cut at 6
    assert short[0] == 101 and short[-1] == 102 and len(short) == 3
    assert small.token_ids(["bad \udc80 byte"])[0][0] == 101  # cleaned as embed cleans


def test_long_text_embeds(embedder: Embedder) -> None:
    out = embedder.embed(["token " * 5000])
    assert out.shape == (1, DIM) and np.isfinite(out).all()


def test_lone_surrogates_do_not_crash(embedder: Embedder) -> None:
    text = b"name = 'caf\xe9'".decode("utf-8", "surrogateescape")
    assert embedder.embed([text]).shape == (1, DIM)
    assert embedder.count_tokens(text) > 0


def test_count_tokens(embedder: Embedder) -> None:
    assert embedder.count_tokens("hello world") == 2
    assert embedder.count_tokens("") == 0


def test_count_tokens_long_text_is_exact(embedder: Embedder) -> None:
    reference = Tokenizer.from_file(str(TOKENIZER_PATH))
    reference.no_truncation()
    reference.no_padding()
    lines = [f"def function_{i}(argument_{i}, *rest):  # comment {i} über" for i in range(2000)]
    no_newlines = "x" * 20_000 + " " + "yz " * 10_000  # cut at spaces, and one huge token
    for text in ("\n".join(lines), no_newlines):
        expected = len(reference.encode(text, add_special_tokens=False).ids)
        assert embedder.count_tokens(text) == expected


def test_count_tokens_remembers_lines_and_stays_exact(embedder: Embedder) -> None:
    """Counted line by line with each line's count remembered: the same totals as the whole
    text tokenized at once, on this package's source (asked twice: cold, then from memory),
    on packs made of its pieces, and on text with CJK, accents, tabs and carriage returns."""
    import random

    reference = Tokenizer.from_file(str(TOKENIZER_PATH))
    reference.no_truncation()
    reference.no_padding()
    counter = Embedder()  # its own memory of lines, cold
    root = Path(embedder_module.__file__).parents[1]
    texts = [p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))][:60]
    rng = random.Random(3)
    texts += ["\n\n".join(rng.sample(texts, 3)) for _ in range(10)]
    texts += ["缓存的键\r\n\tcafé  naïve\n\n", "a\u0000b\u200bc\n", "\n", "  \n  x"]
    for text in texts + texts:
        expected = len(reference.encode(text, add_special_tokens=False).ids)
        assert counter.count_tokens(text) == expected


def test_model_id(tmp_path: Path) -> None:
    assert MAX_TOKENS == 256  # ids at 256 tokens keep the form they had before the cut was in it
    assert MODEL_ID.startswith("minilm-l6-v2-dq8@") and len(MODEL_ID.split("@")[1]) == 12
    # The pinned digest is the shipped file's (the id is not hashed at start-up).
    assert hashlib.sha256(default_model_path().read_bytes()).hexdigest() == MODEL_SHA256
    assert MODEL_SHA256.startswith(MODEL_ID.split("@")[1])
    assert Embedder().model_id == MODEL_ID
    # The cut is part of the id: a vector read at another length is another vector.
    assert Embedder(max_tokens=128).model_id == f"{MODEL_ID}/128"
    # A model file given explicitly is hashed; the same bytes give the same id.
    copy = tmp_path / "model.onnx"
    shutil.copyfile(default_model_path(), copy)
    assert Embedder(model_path=copy).model_id == MODEL_ID


def test_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="model"):
        Embedder(model_path=tmp_path / "nope.onnx")


# -- keys --------------------------------------------------------------------------------------


def test_embedding_text_and_key() -> None:
    chunk = make_chunk()
    assert embedding_text(chunk) == "a/b.py\nf\ndef f():\n    pass\n"
    key = embedding_key(chunk, MODEL_ID)
    assert len(key) == 64 and int(key, 16) >= 0
    assert key == embedding_key(make_chunk(), MODEL_ID)
    assert key != embedding_key(chunk, "other-model@000000000000")
    assert key != embedding_key(make_chunk(path="a/c.py"), MODEL_ID)
    assert key != embedding_key(make_chunk(text="def f():\n    return 1\n"), MODEL_ID)


# -- cache -------------------------------------------------------------------------------------


def rand_vectors(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return {f"key{i}": v[i] for i in range(n)}


def test_cache_round_trip(tmp_path: Path) -> None:
    items = rand_vectors(1200)  # more keys than one SELECT ... IN chunk
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        assert cache.get_many(list(items)) == {}
        cache.put_many(items)
        got = cache.get_many([*items, "absent"])
    assert set(got) == set(items)
    for key, vec in items.items():
        assert got[key].dtype == np.float32
        assert np.abs(got[key] - vec).max() < 2e-3  # stored as float16
    # Persisted: a new instance (another process, in real use) sees it.
    with EmbeddingCache(tmp_path / "c.sqlite") as again:
        assert len(again.get_many(list(items))) == 1200


def test_cache_default_path_honours_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cachedir"))
    cache = EmbeddingCache()
    cache.put_many(rand_vectors(1))
    cache.close()
    assert cache.path == tmp_path / "cachedir" / CACHE_FILE
    assert cache.path.is_file()


def test_two_open_caches_share_writes(tmp_path: Path) -> None:
    a = EmbeddingCache(tmp_path / "c.sqlite")
    b = EmbeddingCache(tmp_path / "c.sqlite")
    a.put_many(rand_vectors(3, seed=1))
    b.put_many({"other": np.ones(DIM, dtype=np.float32)})
    assert len(b.get_many(["key0", "key1", "key2"])) == 3
    assert "other" in a.get_many(["other"])
    a.close()
    b.close()


def test_corrupt_cache_file_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    path.write_bytes(os.urandom(64) + b"this is not a database" * 500)
    cache = EmbeddingCache(path)
    assert (tmp_path / "c.sqlite.corrupt").is_file()
    cache.put_many(rand_vectors(2))
    assert len(cache.get_many(["key0", "key1"])) == 2
    cache.close()


def test_cache_corrupted_while_open_recovers(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    items = rand_vectors(500)
    with EmbeddingCache(path) as writer:
        writer.put_many(items)
    cache = EmbeddingCache(path)
    with path.open("r+b") as fh:  # damage the file under the open connection
        fh.write(b"\xaa" * path.stat().st_size)
    assert cache.get_many(list(items)) == {}  # misses, not a crash
    cache.put_many({"fresh": np.ones(DIM, dtype=np.float32)})
    assert list(cache.get_many(["fresh"])) == ["fresh"]
    cache.close()


def test_unusable_cache_dir_falls_back_to_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = EmbeddingCache(blocker / "sub" / "c.sqlite")
    cache.put_many(rand_vectors(1))
    assert "key0" in cache.get_many(["key0"])
    cache.close()


def test_cache_rejects_wrong_shape(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path / "c.sqlite") as cache, pytest.raises(ValueError):
        cache.put_many({"k": np.ones(DIM + 1, dtype=np.float32)})


# -- embed_with_cache --------------------------------------------------------------------------


def test_embed_with_cache_computes_only_misses(embedder: Embedder, tmp_path: Path) -> None:
    chunks = [
        make_chunk(symbol=f"f{i}", text=f"def f{i}(x):\n    return x * {i}\n") for i in range(5)
    ]
    texts = {embedding_key(c, embedder.model_id): embedding_text(c) for c in chunks}
    calls: list[tuple[int, int]] = []
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        first, computed = embed_with_cache(
            embedder, cache, texts, progress=lambda d, t: calls.append((d, t))
        )
        assert computed == 5 and set(first) == set(texts)
        assert calls[-1] == (5, 5)
        second, computed_again = embed_with_cache(embedder, cache, texts)
        assert computed_again == 0
        for key in texts:
            # Identical whether fresh or cached, and close to the model's own output.
            assert np.array_equal(first[key], second[key])
        direct = embedder.embed(list(texts.values()))
        for i, key in enumerate(texts):
            assert np.abs(first[key] - direct[i]).max() < 2e-3
        # One new chunk: only it is embedded.
        extra = make_chunk(symbol="g", text="def g():\n    return 'new'\n")
        more = {**texts, embedding_key(extra, embedder.model_id): embedding_text(extra)}
        third, computed_third = embed_with_cache(embedder, cache, more)
        assert computed_third == 1 and len(third) == 6
        assert embed_with_cache(embedder, cache, {}) == ({}, 0)
