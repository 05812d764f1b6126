"""Code terms as the lexical index writes them: the remembered per-identifier terms
(``terms._IDENT_TERMS``) and the per-file path terms of ``LexicalIndex.add`` must give exactly
what splitting every occurrence anew gave, on real code, however often the memory empties."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_evidence.index import terms
from code_evidence.index.lexical import LexDoc, LexicalIndex
from code_evidence.index.terms import IDENT_RE, code_terms, split_identifier

PACKAGE = Path(terms.__file__).resolve().parents[1]


def reference_terms(text: str) -> list[str]:
    """The splitter before identifiers were remembered (ASCII text): each occurrence split."""
    out: list[str] = []
    for m in IDENT_RE.finditer(text):
        ident = m.group(0)
        whole = ident.strip("_").lower()
        if not whole:
            continue
        parts = split_identifier(ident)
        out.append(whole)
        if not (len(parts) <= 1 and (not parts or parts[0] == whole)):
            out.extend(parts)
    return out


def _sources() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))]
    return [t for t in texts if t.isascii()]


@pytest.mark.parametrize("limit", [1 << 15, 7])
def test_remembered_identifiers_give_the_terms_of_splitting_each_one(
    monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    monkeypatch.setattr(terms, "_IDENT_TERMS", {})
    monkeypatch.setattr(terms, "_IDENT_TERMS_MAX", limit)  # 7: emptied every few identifiers
    sources = _sources()
    assert len(sources) > 50
    for text in sources:
        assert code_terms(text) == reference_terms(text)
    assert len(terms._IDENT_TERMS) <= limit
    # Edge cases: underscores alone, digits, acronyms, a word whose only part is itself.
    odd = "__ _ 0x1F utf8 HTTPServer __init__ a_B_c XMLHttpRequest2 snake_case_42 x"
    assert code_terms(odd) == reference_terms(odd)


def test_each_document_keeps_its_own_path_terms(tmp_path: Path) -> None:
    # Chunks of one file come together and their path is split once; a file whose chunks
    # come apart, or the next file, must still get its own path.
    lex = LexicalIndex(tmp_path / "lexical")
    lex.add(
        [
            LexDoc(1, "pkg/alpha.py", "one", "def one(): pass"),
            LexDoc(2, "pkg/alpha.py", "two", "def two(): pass"),
            LexDoc(3, "lib/beta.py", "three", "def three(): pass"),
            LexDoc(4, "pkg/alpha.py", "four", "def four(): pass"),
        ]
    )
    lex.commit()
    assert sorted(cid for cid, _ in lex.view().search(["alpha"], 10)) == [1, 2, 4]
    assert [cid for cid, _ in lex.view().search(["beta"], 10)] == [3]
    assert sorted(cid for cid, _ in lex.view().search(["lib"], 10)) == [3]
