"""The eight languages added after the first six (C, C++, C#, Ruby, PHP, Kotlin, Swift, Scala),
end to end through the real engine: a small project per language (tests/fixtures/languages:
files that import each other, a test that repeats the question's words, a decoy with similar
words) in a git repository, indexed with the real grammars, Tantivy, USearch and the models.

For each, a plain-English question finds the function it describes first, with its qualified
symbol and kind; the function's callers are found by name; the test about it ranks below it;
and the imports between the files are resolved for the structural channel.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from code_evidence.api import FindRequest
from code_evidence.engine import Engine
from support.project import git, init_repo

FIXTURES = Path(__file__).parent / "fixtures" / "languages"


@dataclass(frozen=True)
class Case:
    language: str
    question: str
    path: str  # where the answer is defined (with its body)
    symbol: str
    kind: str
    caller: str  # a file whose code calls it
    test: str  # the test file about it
    edges: tuple[tuple[str, str], ...]  # import edges the resolver must find


CASES = [
    Case(
        "c",
        "overwrite the oldest record when the ring buffer is full",
        "src/ringbuf.c",
        "ringbuf_push",
        "function",
        "src/logger.c",
        "tests/test_ringbuf.c",
        (
            ("src/ringbuf.c", "include/ringbuf.h"),
            ("src/logger.c", "src/logger.h"),
            ("src/logger.h", "include/ringbuf.h"),
            ("tests/test_ringbuf.c", "include/ringbuf.h"),
        ),
    ),
    Case(
        "cpp",
        "match a request path against the registered routes and extract the named parameters",
        "src/router.cpp",
        "http.Router.match",
        "method",
        "src/server.cpp",
        "tests/router_test.cpp",
        (
            ("src/router.cpp", "include/http/router.hpp"),
            ("include/http/router.hpp", "include/http/request.hpp"),
            ("src/server.cpp", "include/http/router.hpp"),
        ),
    ),
    Case(
        "csharp",
        "reserve stock for an order and fail when there is not enough on hand",
        "src/Warehouse/Services/StockService.cs",
        "StockService.ReserveStock",
        "method",
        "src/Warehouse/Controllers/OrderController.cs",
        "tests/Warehouse.Tests/StockServiceTests.cs",
        (
            (
                "src/Warehouse/Controllers/OrderController.cs",
                "src/Warehouse/Services/StockService.cs",
            ),
            ("src/Warehouse/Controllers/OrderController.cs", "src/Warehouse/Models/StockItem.cs"),
            ("src/Warehouse/Services/StockService.cs", "src/Warehouse/Models/StockItem.cs"),
        ),
    ),
    Case(
        "ruby",
        "charge a late fee when an unpaid invoice is past its due date",
        "lib/billing/invoice.rb",
        "Billing.Invoice.apply_late_fee!",
        "method",
        "lib/billing/reminder_job.rb",
        "spec/billing/invoice_spec.rb",
        (
            ("lib/billing.rb", "lib/billing/invoice.rb"),
            ("lib/billing.rb", "lib/billing/reminder_job.rb"),
            ("lib/billing/reminder_job.rb", "lib/billing/invoice.rb"),
            ("spec/billing/invoice_spec.rb", "lib/billing.rb"),
        ),
    ),
    Case(
        "php",
        "email the user a link to reset their password",
        "src/Auth/PasswordResetService.php",
        "PasswordResetService.sendResetLink",
        "method",
        "src/Http/ForgotPasswordController.php",
        "tests/Auth/PasswordResetServiceTest.php",
        (
            ("src/Http/ForgotPasswordController.php", "src/Auth/PasswordResetService.php"),
            ("src/Auth/PasswordResetService.php", "src/Mail/Mailer.php"),
            ("tests/Auth/PasswordResetServiceTest.php", "src/Auth/TokenRepository.php"),
        ),
    ),
    Case(
        "kotlin",
        "exponential backoff delay before retrying a failed network request",
        "app/src/main/kotlin/com/acme/notes/net/RetryPolicy.kt",
        "RetryPolicy.nextDelay",
        "method",
        "app/src/main/kotlin/com/acme/notes/sync/NoteUploader.kt",
        "app/src/test/kotlin/com/acme/notes/net/RetryPolicyTest.kt",
        (
            (
                "app/src/main/kotlin/com/acme/notes/sync/NoteUploader.kt",
                "app/src/main/kotlin/com/acme/notes/net/RetryPolicy.kt",
            ),
        ),
    ),
    Case(
        "swift",
        "decode the daily forecast JSON into one forecast per day",
        "Sources/WeatherKit/ForecastParser.swift",
        "ForecastParser.parseDaily",
        "method",
        "Sources/WeatherApp/ForecastViewModel.swift",
        "Tests/WeatherKitTests/ForecastParserTests.swift",
        (
            (
                "Sources/WeatherApp/ForecastViewModel.swift",
                "Sources/WeatherKit/ForecastParser.swift",
            ),
            ("Sources/WeatherApp/ForecastViewModel.swift", "Sources/WeatherKit/Units.swift"),
            (
                "Tests/WeatherKitTests/ForecastParserTests.swift",
                "Sources/WeatherKit/ForecastParser.swift",
            ),
        ),
    ),
    Case(
        "scala",
        "pick the coupon that gives the biggest discount at checkout",
        "src/main/scala/com/acme/shop/pricing/DiscountEngine.scala",
        "DiscountEngine.bestDiscount",
        "method",
        "src/main/scala/com/acme/shop/cart/Checkout.scala",
        "src/test/scala/com/acme/shop/pricing/DiscountEngineSpec.scala",
        (
            (
                "src/main/scala/com/acme/shop/cart/Checkout.scala",
                "src/main/scala/com/acme/shop/pricing/DiscountEngine.scala",
            ),
            (
                "src/main/scala/com/acme/shop/cart/Checkout.scala",
                "src/main/scala/com/acme/shop/pricing/Coupon.scala",
            ),
        ),
    ),
]


def make_repo(language: str, dest: Path) -> Path:
    """The fixture project as a git repository with one commit."""
    root = dest / language
    shutil.copytree(FIXTURES / language, root)
    init_repo(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"{language} project")
    return root


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory):
    """One indexed engine per language, shared by the tests of this module."""
    base = tmp_path_factory.mktemp("languages")
    opened: dict[str, Engine] = {}
    try:
        for case in CASES:
            eng = Engine(make_repo(case.language, base), base / f"idx-{case.language}")
            eng.index()
            opened[case.language] = eng
        yield opened
    finally:
        for eng in opened.values():
            eng.close()


def line_of(root: Path, path: str, needle: str) -> int:
    lines = (root / path).read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if needle in text)


# Where the right function is not first (measured when the fixtures and questions were
# written, not tuned away): the shipped cross-encoder was trained on Python only.
_KNOWN = {
    ("scala", "deep"): "the cross-encoder prefers Coupon.discountFor and Checkout",
}


def _depth_cases() -> list[object]:
    out: list[object] = []
    for case in CASES:
        for depth in ("quick", "deep"):
            known = _KNOWN.get((case.language, depth))
            marks = [pytest.mark.xfail(strict=True, reason=known)] if known else []
            out.append(pytest.param(case, depth, marks=marks, id=f"{case.language}-{depth}"))
    return out


@pytest.mark.parametrize(("case", "depth"), _depth_cases())
def test_question_finds_the_function_first(
    engines: dict[str, Engine], case: Case, depth: str
) -> None:
    """``quick``: first-stage ranking and the feature scorer (what hover uses); ``deep``: the
    cross-encoder too, with no time limit (the interactive default stops at a time budget,
    so under load it is not deterministic)."""
    res = engines[case.language].find(FindRequest(case.question, limit=10, depth=depth))
    top = res.results[0]
    assert (top.path, top.symbol, top.kind, top.language) == (
        case.path,
        case.symbol,
        case.kind,
        case.language,
    ), [(r.path, r.symbol, r.kind) for r in res.results[:5]]
    assert not res.insufficient
    tests = [r for r in res.results if r.path == case.test]
    assert all("test" in r.reasons for r in tests)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.language)
def test_tests_rank_below_the_function(engines: dict[str, Engine], case: Case) -> None:
    """Each fixture's test repeats the question's words; it is demoted below the function."""
    res = engines[case.language].find(FindRequest(case.question, limit=20, depth="quick"))
    ranked = [(r.path, r.symbol) for r in res.results]
    tests = [i for i, r in enumerate(res.results) if r.path == case.test]
    assert tests, "the test should be found at all"
    assert all("test" in res.results[i].reasons for i in tests)
    assert ranked.index((case.path, case.symbol)) < min(tests)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.language)
def test_callers_and_definition_by_name(engines: dict[str, Engine], case: Case) -> None:
    eng = engines[case.language]
    name = case.symbol.rsplit(".", 1)[-1]
    line = eng.definitions(name)[0].start
    found = eng.related(case.path, line)
    assert found.name == name and found.symbol == case.symbol
    first = found.definitions[0]
    assert (first.path, first.kind) == (case.path, case.kind)
    callers = {c.path for c in found.callers}
    assert case.caller in callers
    # Code before tests: the test that calls it comes after the real caller.
    paths = [c.path for c in found.callers]
    if case.test in paths:
        assert paths.index(case.caller) < paths.index(case.test)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.language)
def test_imports_are_resolved(engines: dict[str, Engine], case: Case) -> None:
    store = engines[case.language].parts.store
    for src, dst in case.edges:
        assert dst in store.imports_of(src), (src, store.imports_of(src))


@pytest.mark.parametrize("language", ["c", "cpp"])
def test_header_declaration_is_secondary_unless_asked(
    engines: dict[str, Engine], language: str
) -> None:
    case = next(c for c in CASES if c.language == language)
    eng = engines[language]
    res = eng.find(FindRequest(case.question, limit=20))
    ranked = [(r.path, r.symbol, r.kind) for r in res.results]
    body = res.results[ranked.index((case.path, case.symbol, case.kind))]
    # The header's documentation counted for the body, and the prototype itself is demoted.
    assert "declared-in-header" in body.reasons
    for i, r in enumerate(res.results):
        if r.kind == "declaration" and r.symbol == case.symbol:
            assert "declaration" in r.reasons and i > ranked.index(
                (case.path, case.symbol, case.kind)
            )
    asked = eng.find(FindRequest(f"where is the header declaration: {case.question}", limit=10))
    decl = next(r for r in asked.results if r.kind == "declaration" and r.symbol == case.symbol)
    assert decl.path.endswith((".h", ".hpp")) and "declaration" not in decl.reasons
    # Hover's definitions list the body first, then the prototype.
    kinds = [d.kind for d in eng.definitions(case.symbol.rsplit(".", 1)[-1])]
    assert kinds[0] == case.kind and "declaration" in kinds
