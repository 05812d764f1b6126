"""A question about the open file itself ("what else must change with this file?") is read
as the names the file defines, answered with one result per other file, the open file's own
chunks after them; a question that names anything else is read as asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_evidence.api import FindRequest
from code_evidence.engine import Engine
from code_evidence.index.chunk import Chunk
from code_evidence.index.store import StoredChunk
from code_evidence.search import subject
from code_evidence.search.query import analyze


@pytest.mark.parametrize(
    "question",
    [
        "what else must change with this file?",
        "What else needs to change when I edit this",
        "files that usually change together with this one",
        "which tests cover this",
        "what depends on this module",
        "this",
        "这个文件还要改什么",
        "哪些测试覆盖了这个文件",
        "这个模块被谁调用",
        "who calls this function?",
        "这个函数被谁调用",
    ],
)
def test_a_question_that_names_nothing_but_the_file_is_about_it(question: str) -> None:
    assert subject.asks_about_the_file(analyze(question))


@pytest.mark.parametrize(
    "question",
    [
        "what else must change when parse_args moves",  # a name
        "what else must change with the timeout",  # a word to look for
        "what else must change in 'src/app.py'",  # a quote and a path
        "这个文件的缓存逻辑在哪里",  # Chinese naming the caching logic
        "这个文件还需要改什么配置",  # ... the configuration
        "KeyError: 'this'",  # an error
    ],
)
def test_a_question_that_names_something_is_read_as_asked(question: str) -> None:
    assert not subject.asks_about_the_file(analyze(question))


def stored(i: int, symbol: str) -> StoredChunk:
    chunk = Chunk("a.py", i, i + 1, symbol, "function", "python", "pass", f"h{i}")
    return StoredChunk(i, chunk, None)


def test_the_names_are_the_outermost_ones_in_line_order_each_once() -> None:
    symbols = ["", "Cart", "Cart.total", "Cart.add", "_helper", "x", "checkout", "Cart"]
    names = subject.defined_names(stored(i, s) for i, s in enumerate(symbols))
    assert names == ["Cart", "_helper", "checkout"]
    many = [stored(i, f"name{i}") for i in range(40)]
    assert len(subject.defined_names(many)) == subject.MAX_NAMES


def test_the_read_question_keeps_what_was_asked_of_it() -> None:
    asked = analyze("which tests cover this", "find-file")
    read = subject.as_its_names(asked, ["compute_total", "Cart"])
    assert read.about_tests and read.intent == "find-file"
    assert "compute_total" in read.identifiers and "cart" in read.terms


FILES = {
    "shop/cart.py": (
        "def compute_total(cart):\n"
        "    return sum(item.price for item in cart.items)\n\n\n"
        "def apply_discount(cart, rate):\n"
        "    return compute_total(cart) * (1 - rate)\n"
    ),
    "shop/checkout.py": (
        "from shop.cart import compute_total\n\n\n"
        "def charge(customer, cart):\n"
        "    amount = compute_total(cart)\n"
        "    return customer.pay(amount)\n"
    ),
    "shop/receipts.py": (
        "from shop.cart import apply_discount\n\n\n"
        "def print_receipt(cart, rate):\n"
        "    return f'total: {apply_discount(cart, rate)}'\n"
    ),
    # What the question's own words match: a file about files that change.
    "shop/files.py": (
        "class ChangedFile:\n"
        '    """A file that must change: what else changed with this file, and when."""\n\n'
        "    def change(self, file):\n"
        "        return file.change_else(self)\n"
    ),
    "tests/test_cart.py": (
        "from shop.cart import compute_total\n\n\n"
        "def test_compute_total(cart):\n"
        "    assert compute_total(cart) == 3\n"
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("subject")
    ws = root / "ws"
    for rel, text in FILES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    with Engine(ws, root / "idx") as eng:
        eng.index()
        yield eng


def ask(eng: Engine, question: str) -> tuple[list[str], list[str]]:
    res = eng.find(FindRequest(question, open_file="shop/cart.py", budget_tokens=0))
    return [r.path for r in res.results], res.notes


def test_the_file_s_users_answer_what_else_must_change(engine: Engine) -> None:
    paths, notes = ask(engine, "what else must change with this file?")
    users = {"shop/checkout.py", "shop/receipts.py"}
    assert set(paths[:2]) == users, paths
    assert paths.index("shop/files.py") > 1 if "shop/files.py" in paths else True
    others = [p for p in paths if p != "shop/cart.py"]
    distinct = len(set(others))
    assert len(set(others[:distinct])) == distinct, "each other file once before any twice"
    first_own = paths.index("shop/cart.py")
    assert all(p == "shop/cart.py" for p in paths[first_own:]), "the open file's chunks last"
    assert any("asked about shop/cart.py itself" in n and "compute_total" in n for n in notes)


def test_which_tests_cover_it_lists_the_tests_first(engine: Engine) -> None:
    paths, _ = ask(engine, "which tests cover this")
    assert paths[0] == "tests/test_cart.py", paths


def test_a_question_about_the_function_at_the_cursor_is_read_as_its_name(
    engine: Engine,
) -> None:
    """With a line, "this function" is the definition there: ``apply_discount``'s caller
    comes first, not ``compute_total``'s; without a line it is the file again."""
    req = FindRequest("who calls this function?", open_file="shop/cart.py", line=6, budget_tokens=0)
    res = engine.find(req)
    assert res.results[0].path == "shop/receipts.py", [r.path for r in res.results]
    assert "asked about apply_discount in shop/cart.py: read as its name" in res.notes[0]
    unplaced = engine.find(FindRequest("who calls this function?", open_file="shop/cart.py"))
    assert "asked about shop/cart.py itself" in unplaced.notes[0]


def test_a_question_with_words_of_its_own_is_read_as_asked(engine: Engine) -> None:
    paths, notes = ask(engine, "what else must change in ChangedFile")
    assert paths[0] == "shop/files.py"
    assert not any("itself" in n for n in notes)


def test_a_file_with_no_names_reads_the_question_as_asked(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("x\n")
    (ws / "files.py").write_text("def change_file(file):\n    return file\n")
    with Engine(ws, tmp_path / "idx") as eng:
        eng.index()
        res = eng.find(FindRequest("what else must change", open_file="notes.txt"))
    assert not any("itself" in n for n in res.notes)
