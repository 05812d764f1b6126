"""Which files get a vector (issue 24): translation catalogs, lockfiles, fixtures and data
files are answered by BM25 alone; everything else is embedded. The index counts what it
leaves out, so a workspace full of catalogs is still ``ready`` and never re-embeds them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from code_evidence.api import Chunk, FindRequest
from code_evidence.engine import Engine
from code_evidence.filekinds import vector_kind, wants_vector
from code_evidence.index.parts import check_index
from code_evidence.index.plan import vector_target
from code_evidence.models.embed_cache import embedding_key, embedding_text, text_key
from support.project import write_files


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("django/conf/locale/de/LC_MESSAGES/django.po", "catalog"),
        ("po/messages.pot", "catalog"),
        ("web/i18n/app.xliff", "catalog"),
        ("package-lock.json", "lockfile"),
        ("frontend/yarn.lock", "lockfile"),
        ("Cargo.lock", "lockfile"),
        ("Pipfile.lock", "lockfile"),
        ("go.sum", "lockfile"),
        ("tests/fixtures/users.json", "fixture"),
        ("app/fixtures/initial_data.yaml", "fixture"),
        ("data/cities.csv", "data"),
        ("static/img/logo.svg", "data"),
        ("events.jsonl", "data"),
        # embedded: code, config, docs, templates, and code inside a fixtures folder
        ("django/db/models/query.py", None),
        ("package.json", None),
        ("tsconfig.json", None),
        ("docs/howto/deploy.md", None),
        ("templates/admin/base.html", None),
        ("tests/fixtures/factories.py", None),
        ("django/conf/locale/de/formats.py", None),
        ("Cargo.toml", None),
    ],
)
def test_kind_of_each_file(path: str, kind: str | None) -> None:
    assert vector_kind(path) == kind
    assert wants_vector(path) is (kind is None)


FILES = {
    "shop/pricing.py": "def net_price(gross):\n    return gross / 1.2\n",
    "shop/locale/de/LC_MESSAGES/django.po": 'msgid "Shopping basket"\nmsgstr "Warenkorb"\n',
    "package-lock.json": '{"name": "shop", "lockfileVersion": 3, "packages": {}}\n',
    "shop/fixtures/products.json": '[{"model": "shop.product", "pk": 1}]\n',
    "shop/data/regions.csv": "code,name\nDE,Germany\n",
}


def test_only_what_is_asked_by_meaning_is_embedded(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_files(ws, FILES)
    with Engine(ws, tmp_path / "idx") as eng:
        report = eng.index()
        chunks = list(eng.reader.all_chunks())
        with_vector = {sc.chunk.path for sc in chunks if sc.id in eng.parts.vectors}
        assert with_vector == {"shop/pricing.py"}
        assert report.embedded + report.vectors_from_cache == len(eng.parts.vectors)
        assert vector_target(eng.reader) == len(eng.parts.vectors) < len(chunks)
        assert eng.state == "ready"
        assert check_index(eng.reader, eng.parts.lexical, eng.parts.vectors).complete
        # BM25 still answers from every one of them.
        hit = eng.find(FindRequest('"Warenkorb"'), refresh=False).results
        assert hit and hit[0].path == "shop/locale/de/LC_MESSAGES/django.po"

        # The count follows deletions and additions without a recount.
        (ws / "shop/data/regions.csv").unlink()
        write_files(ws, {"shop/data/cities.tsv": "id\tname\n1\tBerlin\n"})
        eng.index()
        assert vector_target(eng.reader) == len(eng.parts.vectors)
        assert eng.state == "ready"


def test_a_new_policy_drops_vectors_an_older_one_gave(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_files(ws, FILES)
    with Engine(ws, tmp_path / "idx") as eng:
        eng.index()
        catalog = [sc for sc in eng.reader.all_chunks() if not wants_vector(sc.chunk.path)]
        # An index written before the policy: every chunk had a vector.
        eng.parts.vectors.add([sc.id for sc in catalog], eng.embedder.embed(["x"] * len(catalog)))
        eng.parts.store.set_meta_now({"vector_policy": None, "bm25_only": None})
        eng.index()
        assert not any(sc.id in eng.parts.vectors for sc in catalog)
        assert vector_target(eng.reader) == len(eng.parts.vectors) == 1
        assert eng.state == "ready"


def test_docs_are_embedded_from_their_head_and_tests_and_code_whole() -> None:
    body = "".join(f"    assert check({i})\n" for i in range(30))
    test = Chunk(
        path="tests/test_pricing.py",
        start=1,
        end=31,
        symbol="test_net_price",
        kind="function",
        language="python",
        text=f"def test_net_price():\n{body}",
        hash="h",
        is_test=True,
    )
    assert embedding_text(test).endswith(body)  # a test whole: cut, it outranked the code
    doc = dataclasses.replace(
        test, path="docs/pricing.rst", symbol="", is_test=False, text="\n".join(map(str, range(20)))
    )
    assert embedding_text(doc) == "docs/pricing.rst\n\n" + "\n".join(map(str, range(8)))
    code = dataclasses.replace(test, path="shop/pricing.py", is_test=False)
    assert embedding_text(code).endswith(body)  # source code whole (the model cuts at 256)


def test_a_new_policy_reembeds_chunks_whose_embedded_text_it_changed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    test_body = "def test_net_price():\n" + "".join(f"    assert x({i})\n" for i in range(9))
    write_files(ws, {**FILES, "tests/test_pricing.py": test_body})
    with Engine(ws, tmp_path / "idx") as eng:
        eng.index()
        (test,) = [sc for sc in eng.reader.all_chunks() if sc.chunk.is_test]
        (code,) = [sc for sc in eng.reader.all_chunks() if sc.chunk.path == "shop/pricing.py"]
        model = eng.embedder.model_id
        assert test.emb_key == embedding_key(test.chunk, model)
        # An index written under policy 2 embedded only the test's first line.
        head = test.chunk.text.split("\n", 1)[0]
        old = text_key(f"{test.chunk.path}\n{test.chunk.symbol}\n{head}", model)
        eng.parts.store.set_emb_keys([(test.id, old)])
        eng.parts.store.set_meta_now({"vector_policy": "2"})
        report = eng.index()
        (now,) = [sc for sc in eng.reader.all_chunks() if sc.chunk.is_test]
        assert now.emb_key == embedding_key(now.chunk, model) != old
        assert now.id in eng.parts.vectors and code.id in eng.parts.vectors
        # The test's new text came from the cache or the model; the code kept its vector.
        assert report.embedded + report.vectors_from_cache == 1
        assert eng.state == "ready"


def test_a_new_embedding_model_reembeds_every_chunk(tmp_path: Path) -> None:
    """An index made by an older model file (a package upgrade): its vectors are in another
    space than the new model's questions, and the shared cache still holds the old model's
    vector under each old key, so every chunk is re-keyed and embedded again."""
    ws = tmp_path / "ws"
    write_files(ws, FILES)
    with Engine(ws, tmp_path / "idx") as eng:
        eng.index()
        model = eng.embedder.model_id
        (code,) = [sc for sc in eng.reader.all_chunks() if wants_vector(sc.chunk.path)]
        old_model = "minilm-l6-v2-int8@8199be6f699a"
        old_key = embedding_key(code.chunk, old_model)
        eng.parts.store.set_emb_keys([(code.id, old_key)])
        # Written before "embedding_model" existed: the old model is under "model" only.
        eng.parts.store.set_meta_now({"model": old_model, "embedding_model": None})
        fresh = eng.embedder.embed([embedding_text(code.chunk)])[0]
        eng.parts._cache().put_many({old_key: -fresh})  # what the old model gave that text
        report = eng.index()
        (now,) = [sc for sc in eng.reader.all_chunks() if sc.id == code.id]
        assert now.emb_key == embedding_key(now.chunk, model) != old_key
        assert report.embedded + report.vectors_from_cache == 1
        ((key, similarity),) = eng.parts.vectors.search(fresh, 1)
        assert key == code.id and similarity > 0.99
        assert eng.parts.store.get_meta("embedding_model") == model
        # The same model again re-embeds nothing.
        assert eng.index().embedded == 0
