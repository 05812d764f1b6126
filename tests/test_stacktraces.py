"""Stack traces in five languages, and a pasted traceback ranking the failing function first."""

from __future__ import annotations

from pathlib import Path

from code_evidence.api import FindRequest
from code_evidence.engine import Engine
from code_evidence.search.query import analyze
from code_evidence.search.stacktraces import (
    Frame,
    error_messages,
    map_to_workspace,
    message_fragments,
    parse_frames,
    typed_text,
)
from support.traces import GO, JAVA, JS, PY, RUST


def test_python_frames_innermost_first() -> None:
    frames = parse_frames(PY)
    assert [(f.path.rsplit("/", 1)[-1], f.line, f.function) for f in frames] == [
        ("pricing.py", 6, "discount_for"),
        ("cart.py", 20, "total"),
        ("app.py", 3, "<module>"),
    ]
    assert error_messages(PY) == ["AttributeError: 'NoneType' object has no attribute 'startswith'"]


def test_other_languages() -> None:
    assert [(f.path, f.line, f.function) for f in parse_frames(JS)] == [
        ("/app/src/users.ts", 42, "getUser"),
        ("/app/src/routes/index.js", 10, "handler"),
    ]
    assert [(f.line, f.function) for f in parse_frames(GO)] == [(12, "lookup"), (20, "main")]
    assert [(f.path, f.line) for f in parse_frames(RUST)] == [("src/parser.rs", 88)]
    java = parse_frames(JAVA)
    assert java[0] == Frame("Broker.java", 57, "offer", "com/acme/queue/")
    assert message_fragments(error_messages(JAVA)[0]) == ["Queue full for group orders"]


RUBY = """lib/rack/query.rb:190:in `check_size': total query size exceeds limit (QueryLimitError)
\tfrom lib/rack/query.rb:61:in 'Rack::QueryParser#parse_nested_query'
\tfrom app.rb:3:in '<main>'"""
PHP = """PHP Fatal error:  Uncaught RuntimeException: Stream is detached in /srv/psr7/Stream.php:233
Stack trace:
#0 /srv/app/src/Upload.php(40): GuzzleHttp\\Psr7\\Stream->read(10)
#1 {main}
  thrown in /srv/psr7/Stream.php on line 233"""
CSHARP = """Unhandled exception. Newtonsoft.Json.JsonReaderException: Unexpected end. Path ''.
   at Newtonsoft.Json.JsonTextReader.ParseValue() in /_/Src/JsonTextReader.cs:line 434
   at Program.Main(String[] args) in /app/Program.cs:line 9"""


MONO = """
Unhandled Exception:
Newtonsoft.Json.JsonReaderException: Unexpected character encountered while parsing value: x. \
Path '', line 0, position 0.
  at Newtonsoft.Json.JsonTextReader.ParseValue () [0x0032e] in \
/src/Newtonsoft.Json/JsonTextReader.cs:1029
  at Newtonsoft.Json.JsonConvert.DeserializeObject[T] (System.String value) [0x00003] in \
/src/Newtonsoft.Json/JsonConvert.cs:742
  at P.Main () [0x00006] in /app/Main.cs:1
[ERROR] FATAL UNHANDLED EXCEPTION: Newtonsoft.Json.JsonReaderException: Unexpected character \
encountered while parsing value: x. Path '', line 0, position 0."""


def test_ruby_php_and_csharp_frames() -> None:
    """Innermost first, as each runtime's own trace says: Ruby's first line is where it was
    raised; PHP's error line names the throw site, then ``#0`` outwards; C# as .NET and as
    Mono print it."""
    assert [(f.path, f.line, f.function) for f in parse_frames(RUBY)] == [
        ("lib/rack/query.rb", 190, "check_size"),
        ("lib/rack/query.rb", 61, "parse_nested_query"),
        ("app.rb", 3, "<main>"),
    ]
    assert [(f.path, f.line, f.function) for f in parse_frames(PHP)] == [
        ("/srv/psr7/Stream.php", 233, None),
        ("/srv/app/src/Upload.php", 40, "read"),
    ]
    assert [(f.path, f.line, f.function) for f in parse_frames(CSHARP)] == [
        ("/_/Src/JsonTextReader.cs", 434, "ParseValue"),
        ("/app/Program.cs", 9, "Main"),
    ]
    mono = parse_frames(MONO)
    assert [(f.path, f.line, f.function) for f in mono] == [
        ("/src/Newtonsoft.Json/JsonTextReader.cs", 1029, "ParseValue"),
        ("/src/Newtonsoft.Json/JsonConvert.cs", 742, "DeserializeObject[T]"),
        ("/app/Main.cs", 1, "Main"),
    ]
    assert error_messages(MONO) == [
        "Newtonsoft.Json.JsonReaderException: Unexpected character encountered while parsing"
        " value: x. Path '', line 0, position 0."
    ]
    assert error_messages(RUBY) == ["QueryLimitError: total query size exceeds limit"]
    assert error_messages(PHP) == ["RuntimeException: Stream is detached"]
    assert typed_text(PHP).strip() == ""  # nothing typed: no must-match text from the trace


def test_a_structured_log_line_is_printed_not_typed() -> None:
    """logrus prints ``msg="…"`` before the panic: its quotes are the program's text, not a
    name the user asks the answer to hold (the right answer was refused for it)."""
    text = (
        'time="2026-12-03T02:55:27Z" level=panic msg="cannot open orders.db" db=orders\n'
        "panic: (*logrus.Entry) 0xc0000800e0\n\ngoroutine 1 [running]:\n"
        "github.com/sirupsen/logrus.(*Entry).log(0xc0000800e0, 0x0, {0xc000012110, 0x16})\n"
        "\t/usr/share/gocode/src/github.com/sirupsen/logrus/entry.go:260 +0x4a5\n"
    )
    assert typed_text(text).strip() == ""
    assert analyze(text).quoted == []


def test_a_rust_panic_s_message_either_way_rust_prints_it() -> None:
    """Before Rust 1.73 the message is quoted on the header line, since then it is the line
    under it; ``'main'`` is the thread's name, never a name the answer must hold."""
    old = "thread 'main' panicked at 'index out of range', src/buf.rs:12:5"
    new = "thread 'main' panicked at src/buf.rs:12:5:\nindex out of range\nnote: run with "
    new += "`RUST_BACKTRACE=1` environment variable to display a backtrace"
    recent = new.replace("'main' panicked", "'main' (21786) panicked")  # the thread's id
    for text in (old, new, recent):
        assert error_messages(text) == ["panic: index out of range"]
        assert [(f.path, f.line) for f in parse_frames(text)] == [("src/buf.rs", 12)]
        assert typed_text(text).strip() == ""
        qa = analyze(text)
        assert qa.message_bodies == ["index out of range"] and "main" not in qa.identifiers


def test_fragments_drop_formatted_values() -> None:
    msg = "ValueError: invalid literal for int() with base 10: 'abc'"
    assert message_fragments(msg) == ["invalid literal for int() with base"]
    assert message_fragments("KeyError: 'user'") == []


def test_frame_paths_map_onto_the_workspace() -> None:
    paths = ["src/shop/cart.py", "cart.py", "src/main/java/com/acme/queue/Broker.java"]
    assert map_to_workspace(Frame("/home/x/src/shop/cart.py", 1, None), paths) == (
        "src/shop/cart.py"
    )
    assert map_to_workspace(Frame("./cart.py", 1, None), paths) == "cart.py"
    java = Frame("Broker.java", 57, "offer", "com/acme/queue/")
    assert map_to_workspace(java, paths) == "src/main/java/com/acme/queue/Broker.java"
    assert map_to_workspace(Frame("/usr/lib/python3.11/json/decoder.py", 1, None), paths) is None
    # A package installed from the workspace's src/ (or lib/) folder: a user's bug report names
    # it where pip put it. A file right under src/ is no package's and matches no such frame.
    site = "/home/u/venv/lib/python3.12/site-packages/"
    installed = ["src/click/core.py", "lib/ansible/cli/doc.py", "src/setup.py", "core.py"]
    assert map_to_workspace(Frame(f"{site}click/core.py", 1, None), installed) == (
        "src/click/core.py"
    )
    assert map_to_workspace(Frame(f"{site}ansible/cli/doc.py", 1, None), installed) == (
        "lib/ansible/cli/doc.py"
    )
    assert map_to_workspace(Frame(f"{site}setuptools/setup.py", 1, None), installed) is None


def test_traceback_query_is_a_failure_intent() -> None:
    qa = analyze(PY)
    assert qa.intent == "fix-failure"
    assert qa.frames[0].function == "discount_for"


def test_pasted_traceback_ranks_the_failing_function_first(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        res = eng.find(FindRequest(PY))
    top = res.results[0]
    assert (top.path, top.symbol) == ("src/shop/pricing.py", "discount_for")
    assert "innermost-frame" in top.reasons
    cart = next(r for r in res.results if r.symbol == "Cart.total")
    assert "stack-frame" in cart.reasons
    assert "recall.frames" in res.trace


def test_error_message_alone_finds_the_raise(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        res = eng.find(FindRequest("OAuthStateError: state mismatch"))
    assert res.results[0].symbol == "check_oauth_state"
    assert "error-message" in res.results[0].reasons


def _line_of(root: Path, path: str, text: str) -> int:
    lines = (root / path).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def _pytest_report(root: Path) -> str:
    """What pytest prints (``--tb=auto``: long first and last entries, short between) when the
    shop's test hands the cart a voucher of None."""
    test = _line_of(root, "tests/test_cart.py", "assert round")
    total = _line_of(root, "src/shop/cart.py", "discount_for(self.code)")
    raised = _line_of(root, "src/shop/pricing.py", 'code.startswith("VIP")')
    rule = "_ " * 39 + "_"
    return f"""\
___________________________ test_total_with_voucher ___________________________

    def test_total_with_voucher():
        cart = Cart("eu")
        cart.add_item("book", 10.0)
        cart.apply_voucher(None)
>       assert round(cart.total(), 2) == 10.2

tests/test_cart.py:{test}: 
{rule}
src/shop/cart.py:{total}: in total
    subtotal -= subtotal * discount_for(self.code)
{rule}

code = None

    def discount_for(code: str) -> float:
        \"\"\"Percentage taken off for a voucher code.\"\"\"
>       if code.startswith("VIP"):
E       AttributeError: 'NoneType' object has no attribute 'startswith'

src/shop/pricing.py:{raised}: AttributeError"""  # noqa: W291 (pytest's place ends in a space)


def test_pytest_report_frames_innermost_first_and_its_error_line(project: Path) -> None:
    report = _pytest_report(project)
    frames = parse_frames(report)
    assert [(f.path, f.function) for f in frames] == [
        ("src/shop/pricing.py", None),
        ("src/shop/cart.py", "total"),
        ("tests/test_cart.py", None),
    ]
    assert error_messages(report) == [
        "AttributeError: 'NoneType' object has no attribute 'startswith'"
    ]
    qa = analyze(report)
    assert qa.intent == "fix-failure"
    # The code pytest printed is not what the user typed: "VIP", "book" and "eu" are not
    # names an answer must hold; and the test pytest names is not the question's subject.
    assert qa.quoted == []
    assert typed_text(report).strip() == ""
    assert qa.about_tests is False
    # --tb=short and --tb=line print the same places their own way.
    short = "src/shop/cart.py:20: in total\n    subtotal -= subtotal * discount_for(self.code)\n"
    assert parse_frames(short) == [Frame("src/shop/cart.py", 20, "total")]
    line = "/srv/shop/src/shop/oauth.py:11: shop.oauth.OAuthStateError: state mismatch"
    assert parse_frames(line) == [Frame("/srv/shop/src/shop/oauth.py", 11, None)]
    assert error_messages(line) == ["shop.oauth.OAuthStateError: state mismatch"]
    # A type checker's line names a place too, but it is not pytest's and no exception.
    assert parse_frames("src/shop/cart.py:20: error: Incompatible types in assignment") == []


def test_pytest_summary_line_is_an_error_line_cut_at_the_width() -> None:
    summary = (
        "FAILED tests/test_login.py::test_callback - shop.oauth.OAuthStateError: state mism..."
    )
    assert error_messages(summary) == ["shop.oauth.OAuthStateError: state"]
    qa = analyze(summary)
    assert qa.intent == "fix-failure" and qa.exception_types == ["OAuthStateError"]
    assert qa.about_tests is False
    # Python's bare ``raise Exception("…")`` prints an error line too.
    assert error_messages("Exception: file does not exist: /tmp/idf.txt") == [
        "Exception: file does not exist: /tmp/idf.txt"
    ]


def test_pasted_pytest_report_ranks_the_raising_function_first(
    project: Path, tmp_path: Path
) -> None:
    with Engine(project, tmp_path / "idx") as eng:
        res = eng.find(FindRequest(_pytest_report(project)))
    top = res.results[0]
    assert (top.path, top.symbol) == ("src/shop/pricing.py", "discount_for")
    assert "innermost-frame" in top.reasons
    assert not res.insufficient, res.insufficient_reason


# node:test under Node 20 writes TAP when its output is not a terminal (a CI log).
TAP = """TAP version 13
# Subtest: app
not ok 1 - app
  ---
  duration_ms: 93.318494
  location: '/srv/shop/test/app.test.js:2:1'
  failureType: 'testCodeFailure'
  error: 'middleware must be a function!'
  code: 'ERR_TEST_FAILURE'
  name: 'TypeError'
  stack: |-
    Application.use (/srv/shop/node_modules/koa/lib/application.js:129:41)
    TestContext.<anonymous> (/srv/shop/test/app.test.js:3:41)
    Test.runInAsyncScope (node:async_hooks:206:9)
  ...
1..1
# tests 1
# fail 1"""

GO_TEST = """--- FAIL: TestApp (0.00s)
panic: chi: routing pattern must begin with '/' in 'users' [recovered]
\tpanic: chi: routing pattern must begin with '/' in 'users'

goroutine 4 [running]:
github.com/go-chi/chi/v5.(*Mux).handle(0xc000100000, 0x1, {0x5c4f2b, 0x5}, {0x0, 0x0})
\t/usr/share/gocode/src/github.com/go-chi/chi/mux.go:405 +0x2fd
_/srv/app.TestApp(0x0?)
\t/srv/app/main_test.go:9 +0x45
FAIL\t_/srv/app\t0.007s"""

# cargo test, with RUST_BACKTRACE=1.
CARGO_TEST = """running 1 test
tests::key_of_number --- FAILED

failures:

---- tests::key_of_number stdout ----

thread 'tests::key_of_number' (20872) panicked at /cargo/serde_json/src/value/index.rs:102:18:
cannot access key "a" in JSON number
stack backtrace:
   2: <str as serde_json::value::index::Index>::index_or_insert
             at /cargo/serde_json/src/value/index.rs:102:18
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.


failures:
    tests::key_of_number

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s

error: test failed, to rerun pass `--lib`"""

MINITEST = """  1) Error:
AppTest#test_app:
Rack::QueryParser::ParameterTypeError: expected Hash (got Array) for param `a'
    /usr/lib/ruby/gems/rack-2.2.22/lib/rack/query_parser.rb:150:in `normalize_params'
    -e:1:in `test_app'

1 runs, 0 assertions, 0 failures, 1 errors, 0 skips"""


def test_node_test_s_tap_block_gives_its_frames_and_its_error() -> None:
    assert parse_frames(TAP)[:2] == [
        Frame("/srv/shop/node_modules/koa/lib/application.js", 129, "Application.use"),
        Frame("/srv/shop/test/app.test.js", 3, "TestContext.<anonymous>"),
    ]
    # The block's ``error:`` key is its message, typed by ``name:``; not an error line itself.
    assert error_messages(TAP) == ["TypeError: middleware must be a function!"]
    qa = analyze(TAP)
    # Its YAML (the test's location, ``ERR_TEST_FAILURE``) is printed, not typed.
    assert qa.quoted == [] and typed_text(TAP).strip() == ""
    assert qa.intent == "fix-failure" and qa.about_tests is False
    multi = (
        "not ok 2 - two\n  ---\n  error: |-\n    bad 'range'\n    second line\n"
        "  name: 'RangeError'\n  ...\n"
    )
    assert error_messages(multi) == ["RangeError: bad 'range'"]
    quoted = 'not ok 3 - three\n  ---\n  error: "first \\"line\\"\\nsecond"\n  ...\n'
    assert error_messages(quoted) == ['Error: first "line"']


def test_go_test_minitest_and_cargo_test_reports_read_as_failures_not_about_tests() -> None:
    # go test raises a caught panic again, marked [recovered]: one message, as Go prints it.
    assert error_messages(GO_TEST) == ["panic: chi: routing pattern must begin with '/' in 'users'"]
    assert analyze(GO_TEST).frames[0].path.endswith("chi/mux.go")
    assert error_messages(CARGO_TEST) == ['panic: cannot access key "a" in JSON number']
    for report in (GO_TEST, MINITEST, CARGO_TEST):
        qa = analyze(report)
        assert qa.intent == "fix-failure" and qa.about_tests is False
    # Rust's note on how to see more is printed, not a name the answer must quote.
    assert analyze(CARGO_TEST).quoted == []
    # A plain traceback through a test still makes tests the subject, as before.
    assert analyze(
        PY.replace("/home/dev/shop/app.py", "/home/dev/shop/tests/test_app.py")
    ).about_tests


# RSpec 3.12: the error's type alone on its line, its message under it, frames under ``# ``.
RSPEC = """F

Failures:

  1) app works
     Failure/Error: Rack::Utils.parse_nested_query("a[]=1&a[b]=2")

     Rack::QueryParser::ParameterTypeError:
       expected Hash (got Array) for param `a'
     # /usr/share/gems/rack-2.2.22/lib/rack/query_parser.rb:150:in `normalize_params'
     # ./spec/app_spec.rb:4:in `block (2 levels) in <top (required)>'

Finished in 0.06523 seconds (files took 0.1315 seconds to load)
1 example, 1 failure

Failed examples:

rspec ./spec/app_spec.rb:3 # app works"""

# Jest 30: the failing line's code frame, then V8's frames relative to the root folder.
JEST = """FAIL ./app.test.js
  ✕ app (57 ms)

  ● app

    TypeError: app.use() requires a middleware function

      1 | test("app", () => {
    > 2 |   const app = express(); app.use("index");
        |                              ^
      3 | });

      at Function.use (node_modules/express/lib/application.js:217:11)
      at Object.use (app.test.js:2:66)

Test Suites: 1 failed, 1 total
Tests:       1 failed, 1 total"""

# Vitest 4: frames under ``❯``, the code frame under them.
VITEST = """ FAIL  app.test.mjs > app
TypeError: app.use() requires a middleware function
 ❯ Function.use node_modules/express/lib/application.js:217:11
 ❯ app.test.mjs:5:66
      4| test("app", () => {
      5|   const app = express(); app.use("index");
       |                              ^

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯

 Test Files  1 failed (1)"""

# JUnit 5's console launcher: ``=>`` before the error, frames without ``at``.
JUNIT = """Failures (1):
  JUnit Jupiter:AppTest:app()
    MethodSource [className = 'AppTest', methodName = 'app', methodParameterTypes = '']
    => java.lang.IllegalArgumentException: The value must be positive
       org.apache.commons.lang3.Validate.isTrue(Validate.java:158)
       AppTest.app(AppTest.java:5)
       java.base/java.lang.reflect.Method.invoke(Method.java:569)
       [...]"""

# PHPUnit 9: each frame a bare place.
PHPUNIT = """PHPUnit 9.6.7 by Sebastian Bergmann and contributors.

E                                                                   1 / 1 (100%)

There was 1 error:

1) AppTest::testApp
InvalidArgumentException: Status code must be an integer value between 1xx and 5xx.

/usr/share/php/GuzzleHttp/Psr7/Response.php:157
/srv/app/tests/AppTest.php:5

ERRORS!
Tests: 1, Assertions: 0, Errors: 1."""


def test_rspec_jest_vitest_junit_and_phpunit_reports_give_frames_and_error_lines() -> None:
    assert parse_frames(RSPEC)[0] == Frame(
        "/usr/share/gems/rack-2.2.22/lib/rack/query_parser.rb", 150, "normalize_params"
    )
    assert error_messages(RSPEC) == [
        "Rack::QueryParser::ParameterTypeError: expected Hash (got Array) for param `a'"
    ]
    assert parse_frames(JEST)[0] == Frame(
        "node_modules/express/lib/application.js", 217, "Function.use"
    )
    assert error_messages(JEST) == ["TypeError: app.use() requires a middleware function"]
    assert parse_frames(JUNIT)[:2] == [
        Frame("Validate.java", 158, "isTrue", "org/apache/commons/lang3/"),
        Frame("AppTest.java", 5, "app"),
    ]
    assert error_messages(JUNIT) == [
        "java.lang.IllegalArgumentException: The value must be positive"
    ]
    assert parse_frames(PHPUNIT) == [
        Frame("/usr/share/php/GuzzleHttp/Psr7/Response.php", 157, None),
        Frame("/srv/app/tests/AppTest.php", 5, None),
    ]
    assert parse_frames(VITEST) == [
        Frame("node_modules/express/lib/application.js", 217, "Function.use"),
        Frame("app.test.mjs", 5, None),
    ]
    # A place typed alone is a place to look at, not a failure's frame.
    alone = analyze("src/Cart.php:12")
    assert alone.frames == [] and alone.path_lines == {"src/Cart.php": 12}
    for report in (RSPEC, JEST, VITEST, JUNIT, PHPUNIT):
        qa = analyze(report)
        assert qa.intent == "fix-failure" and qa.about_tests is False, report
        # The failing line's code, the test's title and the totals are printed, not typed.
        assert qa.quoted == [] and typed_text(report).strip() == "", report
    # Jest drops a plain Error's type: the line under the test's title is its message.
    plain_error = JEST.replace("TypeError: app.use()", "Route.get()")
    assert error_messages(plain_error) == ["Error: Route.get() requires a middleware function"]
    # A CI log keeps the runner's colours; the question is read without them.
    coloured = JEST.replace("TypeError", "\x1b[31m\x1b[1mTypeError\x1b[22m").replace(
        "node_modules", "\x1b[2mnode_modules"
    )
    assert analyze(coloured).frames == analyze(JEST).frames
    assert analyze(coloured).messages == analyze(JEST).messages
    # The user's own words around a paste are still read.
    asked = analyze("why does this fail?\n" + JEST + "\nit started with 'express' 4.21")
    assert asked.quoted == ["express"]


def test_v8_frames_of_constructors_and_of_calls_by_another_name() -> None:
    trace = """Error: Route.get() requires a callback function but got a [object Undefined]
    at Route.<computed> [as get] (/srv/node_modules/express/lib/router/route.js:216:15)
    at get error [as error] (/srv/node_modules/zod/lib/types.js:43:31)
    at new Command (/srv/node_modules/commander/lib/command.js:12:3)
    at Layer.handle [as handle_request] (/srv/node_modules/express/lib/router/layer.js:95:5)
    at async Promise.all (index 0)
    at /srv/app.js:7:1"""
    assert [(f.path.rsplit("/", 1)[-1], f.line) for f in parse_frames(trace)] == [
        ("route.js", 216),
        ("types.js", 43),  # a getter (V8 prints ``get name``; so ``set name``)
        ("command.js", 12),
        ("layer.js", 95),
        ("app.js", 7),
    ]


def test_a_browser_s_frames_name_the_module_on_the_dev_server(
    project: Path, tmp_path: Path
) -> None:
    line = _line_of(project, "web/cartClient.ts", "response.json()")
    module = f"http://localhost:5173/web/cartClient.ts?t=1700000000000:{line}:26"
    chrome = (
        "Uncaught (in promise) TypeError: response.json is not a function\n"
        f"    at fetchCartLines ({module})\n"
        "    at webpack-internal:///./web/main.ts:3:1"
    )
    firefox = f"fetchCartLines@{module}\n@http://localhost:5173/web/main.ts:3:1"
    for trace in (chrome, firefox):
        assert parse_frames(trace) == [
            Frame("/web/cartClient.ts", line, "fetchCartLines"),
            Frame("/web/main.ts", 3, None),
        ]
    assert parse_frames("mail me@example.com:12:3") == []  # no folder: not a frame
    # Next.js's dev server names the bundle's layer: ``webpack-internal:///(rsc)/./…``.
    next_js = "    at CartPage (webpack-internal:///(app-pages-browser)/./web/cartClient.ts:5:3)"
    assert parse_frames(next_js) == [Frame("/web/cartClient.ts", 5, "CartPage")]
    assert parse_frames("CartPage@webpack-internal:///(rsc)/./web/main.ts:3:1") == [
        Frame("/web/main.ts", 3, "CartPage")
    ]
    with Engine(project, tmp_path / "idx") as eng:
        res = eng.find(FindRequest(chrome))
    top = res.results[0]
    assert (top.path, top.symbol) == ("web/cartClient.ts", "fetchCartLines")
    assert "innermost-frame" in top.reasons


# IPython 9 (Jupyter): ``File path:line, in func(args)``, the code under it with ``--->``.
IPYTHON = """---------------------------------------------------------------------------
ParserError                               Traceback (most recent call last)
Cell In[1], line 2
      1 import arrow
----> 2 arrow.get("nope")

File ~/.venv/site-packages/arrow/api.py:86, in get(*args, **kwargs)
     83 def get(*args: Any, **kwargs: Any) -> Arrow:
---> 86     return _factory.get(*args, **kwargs)

File ~/.venv/site-packages/arrow/parser.py:857, in DateTimeParser._parse_multiformat(self, string)
    856     supported_formats = ", ".join(formats)
--> 857     raise ParserError(
    858         f"Could not match input {string!r} to any of the formats: {supported_formats}."
    859     )

ParserError: Could not match input 'nope' to any of the following formats: YYYY-MM-DD, W."""

# IPython 7 and classic notebooks: the line is on the ``--->`` marker under the place.
IPYTHON7 = """---------------------------------------------------------------------------
ParserError                               Traceback (most recent call last)
<ipython-input-1-ab6bf597680a> in <cell line: 0>()
----> 2 arrow.get("nope")

/srv/venv/site-packages/arrow/api.py in get(*args, **kwargs)
     85
---> 86     return _factory.get(*args, **kwargs)
     87

/srv/venv/site-packages/arrow/parser.py in _parse_multiformat(self, string, formats)
    856             supported_formats = ", ".join(formats)
--> 857             raise ParserError(
    858                 f"Could not match input {string!r} to any of the formats: {formats}."

ParserError: Could not match input 'nope' to any of the following formats: YYYY-MM-DD, W."""


# Rich's traceback (rich.traceback.install(), Typer's default), cut to 80 columns.
RICH = """╭─────────────────── Traceback (most recent call last) ────────────────────╮
│ in <module>:4                                                            │
│                                                                          │
│ /srv/venv/site-packages/arrow/api.py:86 in get                           │
│                                                                          │
│    85 │                                                                  │
│ ❱  86 │   return _factory.get(*args, **kwargs)                           │
│                                                                          │
│ /srv/venv/site-packages/arrow/parser.py:857 in _parse_multiformat        │
│                                                                          │
│   856 │   │   │   supported_formats = ", ".join(formats)                 │
│ ❱ 857 │   │   │   raise ParserError(                                     │
│   858 │   │   │   │   f"Could not match input {string!r} to any of the f │
╰──────────────────────────────────────────────────────────────────────────╯
ParserError: Could not match input 'nope' to any of the following formats:
YYYY-MM-DD, W."""


def test_ipython_and_rich_tracebacks_give_frames_and_their_code_is_printed() -> None:
    for trace in (IPYTHON, IPYTHON7, RICH):
        frames = parse_frames(trace)
        assert [(f.path.rsplit("/", 1)[-1], f.line) for f in frames] == [
            ("parser.py", 857),
            ("api.py", 86),
        ], trace
        qa = analyze(trace)
        assert qa.messages[0].startswith("ParserError: Could not match input 'nope'")
        # The cell's and the library's code (its string literals) are printed, not typed (Rich
        # wraps the error's message: its tail is left, and quotes nothing).
        assert qa.quoted == [] and typed_text(trace).strip() in ("", "YYYY-MM-DD, W."), trace
    # Rich wraps a place longer than its box onto the next line.
    inner = ["/srv/a/long/site-packages/arrow/pars", "er.py:857 in _parse_multiformat", ""]
    width = max(map(len, inner))
    wrapped = "\n".join(
        ["╭─── Traceback (most recent call last) ───╮"]
        + [f"│ {line.ljust(width)} │" for line in inner]
        + ["╰" + "─" * (width + 2) + "╯", "ParserError: x"]
    )
    assert parse_frames(wrapped) == [
        Frame("/srv/a/long/site-packages/arrow/parser.py", 857, "_parse_multiformat")
    ]
    # IPython 7 sets the terminal's title first: an escape sequence, dropped.
    assert analyze("\x1b]0;IPython: app\x07" + IPYTHON7).frames == analyze(IPYTHON7).frames


def test_a_compiler_s_diagnostic_names_its_place() -> None:
    # tsc and the C# compiler put the line in parentheses; their codes make it a failure.
    tsc = analyze("web/cartClient.ts(5,26): error TS2339: Property 'jsonx' does not exist")
    assert tsc.path_lines == {"web/cartClient.ts": 5} and tsc.intent == "fix-failure"
    pretty = analyze("web/cartClient.ts:5:26 - error TS2339: Property 'jsonx' does not exist")
    assert pretty.path_lines == {"web/cartClient.ts": 5} and pretty.intent == "fix-failure"
    csharp = analyze("Program.cs(7,13): error CS0103: The name 'x' does not exist")
    assert csharp.path_lines == {"Program.cs": 7} and csharp.intent == "fix-failure"
    # Go writes ./main.go: the file is main.go, not "/main.go" (which names no file).
    assert analyze("./main.go:12:5: undefined: foo").path_lines == {"main.go": 12}
    assert analyze("../lib/router.js:10").paths == ["lib/router.js"]
    # A hidden folder keeps its dot; a sentence's full stop is not part of the name.
    assert analyze("see .github/workflows/ci.yml.").paths == [".github/workflows/ci.yml"]


def test_a_tsc_diagnostic_ranks_the_function_at_its_line_first(
    project: Path, tmp_path: Path
) -> None:
    lines = (project / "web/cartClient.ts").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "response.json()" in text)
    diagnostic = (
        f"web/cartClient.ts({line},26): error TS2339: Property 'jsonx' does not exist on type "
        "'Response'."
    )
    with Engine(project, tmp_path / "idx") as eng:
        res = eng.find(FindRequest(diagnostic))
    top = res.results[0]
    assert (top.path, top.symbol) == ("web/cartClient.ts", "fetchCartLines")
    assert "named-line" in top.reasons


# Real output of gcc 12 / gdb 13 / Valgrind 3.19 on Debian bookworm (trimmed where marked); the
# lldb lines are in lldb's documented ``bt`` format.
ASAN = "\n".join(
    [
        "=================================================================",
        (
            "==16973==ERROR: AddressSanitizer: heap-use-after-free on address 0x606000000020"
            " at pc 0x55fe6db50bcc bp 0x7ffe0f0b65b0 sp 0x7ffe0f0b65a8"
        ),
        "READ of size 8 at 0x606000000020 thread T0",
        "    #0 0x55fe6db50bcb in cJSON_Delete /tmp/build/cJSON-1.7.15/cJSON.c:258",
        "    #1 0x55fe6db5034b in main /tmp/build/app/main.c:5",
        (
            "    #2 0x7f840c645249 in __libc_start_call_main"
            " ../sysdeps/nptl/libc_start_call_main.h:58"
        ),
        "    #4 0x55fe6db50250 in _start (/tmp/build/app/main-sanitized+0x23250)",
        "",
        (
            "0x606000000020 is located 0 bytes inside of 64-byte region"
            " [0x606000000020,0x606000000060)"
        ),
        "freed by thread T0 here:",
        (
            "    #0 0x7f840d0b76a8 in __interceptor_free"
            " ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:52"
        ),
        "    #1 0x55fe6db51035 in cJSON_Delete /tmp/build/cJSON-1.7.15/cJSON.c:271",
        "",
        "Address 0x7ffc55e3f74c is located in stack of thread T0 at offset 76 in frame",
        "  This frame has 2 object(s):",
        "    [48, 52) 'i' (line 1)",
        (
            "SUMMARY: AddressSanitizer: heap-use-after-free"
            " /tmp/build/cJSON-1.7.15/cJSON.c:258 in cJSON_Delete"
        ),
        "Shadow bytes around the buggy address:",
        "=>0x0c0c7fff8000: fa fa fa fa[fd]fd fd fd fd fd fd fd fa fa fa fa",
        "  Heap left redzone:       fa",
        "==16973==ABORTING",
    ]
)
GDB = "\n".join(
    [
        "[Thread debugging using libthread_db enabled]",
        'Using host libthread_db library "/lib/x86_64-linux-gnu/libthread_db.so.1".',
        (
            "terminate called after throwing an instance of"
            " 'nlohmann::json_abi_v3_11_2::detail::type_error'"
        ),
        "  what():  [json.exception.type_error.302] type must be string, but is number",
        "",
        "Program received signal SIGABRT, Aborted.",
        (
            "__pthread_kill_implementation (threadid=<optimized out>, signo=signo@entry=6,"
            " no_tid=no_tid@entry=0) at ./nptl/pthread_kill.c:44"
        ),
        "44\t./nptl/pthread_kill.c: No such file or directory.",
        (
            "#0  __pthread_kill_implementation (threadid=<optimized out>,"
            " signo=signo@entry=6, no_tid=no_tid@entry=0) at ./nptl/pthread_kill.c:44"
        ),
        "#4  0x00007ffff7c9d919 in ?? () from /lib/x86_64-linux-gnu/libstdc++.so.6",
        ("#7  0x00007ffff7ca90d8 in __cxa_throw () from /lib/x86_64-linux-gnu/libstdc++.so.6"),
        (
            "#8  0x000055555556d61e in"
            " nlohmann::json_abi_v3_11_2::detail::from_json<nlohmann::json_abi_v3_11_2::basic"
            "_json<std::map, std::vector, std::__cxx11::basic_string<char,"
            ' std::char_traits<char>, std::allocator<char> >, bool> > (j=..., s="") at'
            " /usr/include/nlohmann/detail/conversions/from_json.hpp:98"
        ),
        (
            "#12 0x000055555555a655 in"
            " nlohmann::json_abi_v3_11_2::basic_json<std::map>::get<std::__cxx11::basic_strin"
            "g<char>, std::__cxx11::basic_string<char> > (this=0x55555559df90) at"
            " /usr/include/nlohmann/json.hpp:1740"
        ),
        "#14 0x00005555555575c9 in main () at j.cpp:5",
    ]
)
GDB_STOP = """Program received signal SIGSEGV, Segmentation fault.
0x0000555555555189 in parse_value (item=0x0, input_buffer=0x7fffffffe0a0) at cJSON.c:1443
1443	    if ((input_buffer->content + input_buffer->offset)[0] == 'n')"""
VALGRIND = """==17148== Invalid read of size 4
==17148==    at 0x10B28A: print_value (cJSON.c:1372)
==17148==    by 0x10ADC4: cJSON_Print (cJSON.c:1250)
==17148==    by 0x10920B: main (uaf.c:6)
==17148==  Address 0x4a40058 is 24 bytes inside a block of size 64 free'd
==17148==    at 0x484417B: free (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==17148==    by 0x1095F0: cJSON_Delete (cJSON.c:271)"""
ASSERT = 'as: as.c:5: port_of: Assertion `cJSON_IsNumber(port) && "port must be a number"\' failed.'
UBSAN = """ub.c:2:82: runtime error: member access within null pointer of type 'struct cJSON'
    #0 0x55629315a26e in main /tmp/s45/real/ub.c:2
    #3 0x55629315a150 in _start (/tmp/s45/real/ub+0xc150)"""
LLDB = "\n".join(
    [
        (
            "* thread #1, queue = 'com.apple.main-thread', stop reason = EXC_BAD_ACCESS"
            " (code=1, address=0x0)"
        ),
        (
            "  * frame #0: 0x0000000100003f24 app`parse_value(item=0x0000000000000000) at"
            " cJSON.c:1443:9"
        ),
        "    frame #1: 0x0000000100003f80 app`main at main.c:20:5",
        "    frame #2: 0x00000001000110fe dyld`start + 462",
    ]
)


def test_native_crash_reports_give_frames_and_print_their_values() -> None:
    def places(text: str) -> list[tuple[str, int, str | None]]:
        return [(f.path.rsplit("/", 1)[-1], f.line, f.function) for f in parse_frames(text)]

    assert places(ASAN)[:2] == [("cJSON.c", 258, "cJSON_Delete"), ("main.c", 5, "main")]
    assert ("cJSON.c", 271, "cJSON_Delete") in places(ASAN)
    assert [p for p in places(GDB) if p[0] != "pthread_kill.c"] == [
        ("from_json.hpp", 98, "from_json"),
        ("json.hpp", 1740, "get"),
        ("j.cpp", 5, "main"),
    ]
    assert places(GDB_STOP) == [("cJSON.c", 1443, "parse_value")]
    assert places(VALGRIND)[:2] == [
        ("cJSON.c", 1372, "print_value"),
        ("cJSON.c", 1250, "cJSON_Print"),
    ]
    assert places(ASSERT) == [("as.c", 5, "port_of")]
    assert places(UBSAN)[:2] == [("ub.c", 2, None), ("ub.c", 2, "main")]
    assert places(LLDB) == [("cJSON.c", 1443, "parse_value"), ("main.c", 20, "main")]
    for report in (ASAN, GDB, GDB_STOP, VALGRIND, ASSERT, UBSAN, LLDB):
        qa = analyze(report)
        # What the tools print around the places (a stack object's 'i', the stopped-on line's
        # 'n', the assertion's string, the gdb's quoted library path) is not typed.
        assert qa.intent == "fix-failure" and qa.quoted == [], report
        assert typed_text(report).strip() == "", report
    # An uncaught C++ exception is an error line: its type, then what() said.
    assert analyze(GDB).messages == [
        "nlohmann::json_abi_v3_11_2::detail::type_error: "
        "[json.exception.type_error.302] type must be string, but is number"
    ]
    libcxx = "libc++abi: terminating due to uncaught exception of type std::runtime_error: no port"
    assert analyze(libcxx).messages == ["std::runtime_error: no port"]
    # What a user writes above a paste stays typed.
    asked = typed_text("why does 'cJSON_Delete' crash?\n" + ASAN).strip()
    assert asked == "why does 'cJSON_Delete' crash?"


def test_a_gdb_backtrace_ranks_the_c_function_at_its_line_first(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "lib").mkdir(parents=True)
    (src / "lib" / "parse.c").write_text(
        '#include "parse.h"\n\nint parse_count(const char *text) {\n    int n = 0;\n'
        "    while (*text) {\n        n += *text++ == ',';\n    }\n    return n;\n}\n\n"
        "int parse_value(const char *text) {\n    return text[0] == 'n' ? 0 : 1;\n}\n"
    )
    (src / "lib" / "parse.h").write_text(
        "int parse_count(const char *text);\nint parse_value(const char *text);\n"
    )
    (src / "main.c").write_text(
        '#include "lib/parse.h"\nint main(void) {\n'
        '    return parse_count(0) + parse_value("x");\n}\n'
    )
    trace = (
        "Program received signal SIGSEGV, Segmentation fault.\n"
        "0x0000555555555139 in parse_count (text=0x0) at /home/ci/build/lib/parse.c:5\n"
        "5\t    while (*text) {\n"
        "#0  0x0000555555555139 in parse_count (text=0x0) at /home/ci/build/lib/parse.c:5\n"
        "#1  0x0000555555555171 in main () at /home/ci/build/main.c:3\n"
    )
    with Engine(src, tmp_path / "idx") as eng:
        res = eng.find(FindRequest(trace))
    top = res.results[0]
    assert (top.path, top.symbol) == ("lib/parse.c", "parse_count")
    # Read as the innermost frame, not only as a path the text names.
    assert "innermost-frame" in top.reasons
    assert top.start <= 5 <= top.end and not res.insufficient


def test_googletest_and_catch2_report_an_uncaught_exception_by_its_message() -> None:
    # Real output of GoogleTest 1.12 and Catch2 2.13 (Debian bookworm), trimmed.
    gtest = "\n".join(
        [
            "Running main() from ./googletest/src/gtest_main.cc",
            "[==========] Running 1 test from 1 test suite.",
            "[ RUN      ] App.Works",
            "unknown file: Failure",
            (
                'C++ exception with description "[json.exception.type_error.302] type must be'
                ' string, but is number" thrown in the test body.'
            ),
            "[  FAILED  ] App.Works (0 ms)",
            "[  PASSED  ] 0 tests.",
            " 1 FAILED TEST",
        ]
    )
    catch2 = "\n".join(
        [
            "~" * 79,
            "c is a Catch v2.13.10 host application.",
            "Run with -? for options",
            "-" * 79,
            "c.cpp:5",
            "." * 79,
            "",
            "c.cpp:5: FAILED:",
            "due to unexpected exception with message:",
            "  [json.exception.type_error.302] type must be string, but is number",
            "",
            "=" * 79,
            "test cases: 1 | 1 failed",
        ]
    )
    for report in (gtest, catch2):
        qa = analyze(report)
        assert qa.messages == [
            "Error: [json.exception.type_error.302] type must be string, but is number"
        ], report
        # The message is not text the answer must quote, and the test is not the subject.
        assert qa.quoted == [] and qa.intent == "fix-failure" and not qa.about_tests, report
    # The frameworks' own words are not searched for; the test's name is still read.
    qa = analyze(gtest)
    assert not {"googletest", "suite", "passed", "running"} & set(qa.terms)
    assert "main" not in qa.identifiers and "App.Works" in qa.identifiers
    assert not {"catch", "host", "application", "options"} & set(analyze(catch2).terms)
    # Catch2 wraps a long message at 80 columns: it is read whole.
    wrapped = catch2.replace(
        "  [json.exception.type_error.302] type must be string, but is number",
        "  [json.exception.parse_error.101] parse error at line 1, column 14: syntax\n"
        "  error while parsing value - invalid literal; last read: 'tru}'",
    )
    assert analyze(wrapped).messages == [
        "Error: [json.exception.parse_error.101] parse error at line 1, column 14: syntax error"
        " while parsing value - invalid literal; last read: 'tru}'"
    ]


def test_testify_s_failed_assertion_reads_the_error_the_code_returned() -> None:
    # Real output of ``go test`` with testify 1.8.1's ``require.NoError`` (Debian bookworm).
    report = "\n".join(
        [
            "--- FAIL: TestApp (0.00s)",
            "    main_test.go:14: ",
            "        \tError Trace:\t/tmp/app/main_test.go:14",
            "        \tError:      \tReceived unexpected error:",
            '        \t            \tinvalid argument "ten" for "--count" flag: strconv.ParseInt:'
            ' parsing "ten": invalid syntax',
            "        \tTest:       \tTestApp",
            "FAIL",
        ]
    )
    qa = analyze(report)
    # testify's own words are not the error; the returned error's quoted values are printed.
    assert qa.messages == [
        'Error: invalid argument "ten" for "--count" flag: strconv.ParseInt: parsing "ten":'
        " invalid syntax"
    ]
    assert qa.quoted == [] and qa.intent == "fix-failure" and not qa.about_tests
    assert "received" not in qa.terms


BUILT_LIBRARY = {
    "package.json": '{"name": "@acme/streams", "version": "2.0.0", "main": "dist/cjs/index.js"}',
    "src/internal/operators/elementAt.ts": """import { ArgumentOutOfRangeError } from '../util';

/** Emits the single value at the specified index. */
export function elementAt<T>(index: number) {
  if (index < 0) {
    throw new ArgumentOutOfRangeError();
  }
  return (source: T[]) => source[index];
}
""",
    "src/internal/operators/first.ts": """export function first<T>(values: T[]) {
  return values[0];
}
""",
    "src/internal/util/errors.ts": """export class ArgumentOutOfRangeError extends Error {
  constructor() {
    super('argument out of range');
  }
}

export function die(message: string): never {
  throw new Error('[streams] ' + message);
}
""",
    "src/api/observe.ts": """import { die } from '../internal/util/errors';

export function observe(target: unknown, listener: unknown) {
  if (typeof listener !== 'function') die('observe expects a function');
  return target;
}
""",
    "src/Store.ts": """export class Store {
  select(key: string) {
    if (!key) throw new Error('select needs a key');
    return key;
  }

  reset() {
    return this;
  }
}
""",
}


def test_a_build_s_frames_find_the_sources_the_build_was_made_from(tmp_path: Path) -> None:
    """A TypeScript library's users print its build (``dist/cjs/…/elementAt.js``, or one
    bundle); its repository holds the sources. The frame is placed by its module path and its
    function's name, never by the build's line (11 here, the source's is 6); a bundle's by the
    one definition of its function's name (a class or a function the bundler renamed,
    ``Store2``, ``observe2``, too)."""
    built = "/srv/app/node_modules/@acme/streams/dist/cjs/internal"
    per_file = f"""Error: argument out of range
    at new ArgumentOutOfRangeError ({built}/util/errors.js:7:9)
    at elementAt ({built}/operators/elementAt.js:11:15)
    at Object.<anonymous> (/srv/app/index.js:3:12)"""
    bundle = """Error: [streams] observe expects a function
    at die (/srv/app/node_modules/@acme/streams/dist/streams.cjs.development.js:89:11)
    at observe (/srv/app/node_modules/@acme/streams/dist/streams.cjs.development.js:3688:7)
    at Object.<anonymous> (/srv/app/index.js:2:1)"""
    renamed = """Error: select needs a key
    at Store2.select (/srv/app/node_modules/@acme/streams/dist/index.mjs:40:11)
    at observe2 (/srv/app/node_modules/@acme/streams/dist/index.mjs:12:3)
    at main (/srv/app/index.js:2:1)"""
    with Engine(_js_workspace(tmp_path / "lib", BUILT_LIBRARY), tmp_path / "idx") as eng:
        answers = {
            name: eng.find(FindRequest(q))
            for name, q in [("per_file", per_file), ("bundle", bundle), ("renamed", renamed)]
        }
    placed = {
        name: [
            (r.path, r.symbol)
            for r in res.results
            if "stack-frame" in r.reasons or "innermost-frame" in r.reasons
        ]
        for name, res in answers.items()
    }
    # The frame that decided to fail comes before the making of the error: the error class's
    # constructor, and ``die``, which never returns.
    assert placed["per_file"] == [
        ("src/internal/operators/elementAt.ts", "elementAt"),
        ("src/internal/util/errors.ts", "ArgumentOutOfRangeError"),
    ]
    assert placed["bundle"] == [
        ("src/api/observe.ts", "observe"),
        ("src/internal/util/errors.ts", "die"),
    ]
    assert "innermost-frame" in answers["bundle"].results[0].reasons
    assert placed["renamed"] == [
        ("src/Store.ts", "Store.select"),
        ("src/api/observe.ts", "observe"),
    ]


def test_another_package_s_build_frames_are_not_the_workspace_s(tmp_path: Path) -> None:
    """An app's trace through a dependency (``node_modules/express/lib/router/index.js``)
    names no file of the app's, even where the app has a ``src/router/index.ts``."""
    app = {
        "package.json": '{"name": "shop-web", "private": true}',
        "src/router/index.ts": "export function handle(req: unknown) {\n  return req;\n}\n",
        "src/server.ts": "export function start(port: number) {\n  return port;\n}\n",
    }
    trace = """TypeError: Cannot read properties of undefined (reading 'url')
    at handle (/srv/shop/node_modules/express/lib/router/index.js:175:20)
    at start (/srv/shop/dist/server.js:9:7)"""
    with Engine(_js_workspace(tmp_path / "app", app), tmp_path / "idx") as eng:
        res = eng.find(FindRequest(trace))
    framed = [
        (r.path, r.symbol)
        for r in res.results
        if "innermost-frame" in r.reasons or "stack-frame" in r.reasons
    ]
    # The app's own build (dist/server.js) is its source's; express's frame is nobody's here.
    assert framed == [("src/server.ts", "start")]


def _js_workspace(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_ci_machine_s_diagnostics_name_their_places() -> None:
    """What a compiler or linter prints in CI: another machine's absolute paths, Maven's and
    ESLint's layouts. Each place is a frame (mapped by its path's suffix, as a trace's), and
    the report is the tool's, not typed: no name it quotes is text the answer must hold."""
    ci = "/home/runner/work/shop/shop"
    reports = {
        f"{ci}/src/net/url.c:12:5: error: 'port' undeclared (first use in this function)": [
            (f"{ci}/src/net/url.c", 12)
        ],
        f'  {ci}/src/shop/cart.py:20:5 - error: "lower" is not a known attribute of "None"': [
            (f"{ci}/src/shop/cart.py", 20)
        ],
        f"[ERROR] {ci}/src/main/java/com/acme/Broker.java:[57,9] cannot find symbol": [
            (f"{ci}/src/main/java/com/acme/Broker.java", 57)
        ],
        f"e: file://{ci}/app/src/main/kotlin/Main.kt:12:5 Unresolved reference 'x'": [
            (f"{ci}/app/src/main/kotlin/Main.kt", 12)
        ],
        f"{ci}/src/Program.cs(7,13): error CS0103: The name 'x' does not exist": [
            (f"{ci}/src/Program.cs", 7)
        ],
        f"::error title=ruff (F841),file={ci}/src/shop/cart.py,line=42,col=5::src/shop/cart.py:"
        "42:5: F841 Local variable `x` is assigned to but never used": [
            (f"{ci}/src/shop/cart.py", 42)
        ],
        f"""{ci}/lib/cart/total.js
  12:7   error    'discount' is assigned a value but never used  no-unused-vars
  40:15  warning  Unexpected var, use let or const instead       no-var

✖ 2 problems (1 error, 1 warning)""": [
            (f"{ci}/lib/cart/total.js", 12),
            (f"{ci}/lib/cart/total.js", 40),
        ],
    }
    for report, places in reports.items():
        qa = analyze(report)
        assert [(f.path, f.line) for f in qa.frames] == places, report
        assert qa.intent == "fix-failure"
        assert typed_text(report).strip() == "" and qa.quoted == []
    # A path alone on a line, with no problem under it, is no report; a sentence's path is
    # read as it always was.
    assert parse_frames(f"{ci}/lib/cart/total.js\n\nwhy is this slow?") == []
    asked = analyze('why does src/shop/cart.py:20 fail with "None"?')
    assert asked.frames == [] and asked.path_lines == {"src/shop/cart.py": 20}
    assert asked.quoted == ["None"]
    # A relative diagnostic's place is read as before; its words are the tool's too.
    local = '  src/shop/io.py:98:23 - error: Argument of type "bytes | IO[Any]" is not "Buffer"'
    assert analyze(local).path_lines == {"src/shop/io.py": 98}
    assert analyze(local).quoted == [] and typed_text(local).strip() == ""


def test_an_eslint_report_from_ci_ranks_the_function_at_its_line_first(tmp_path: Path) -> None:
    app = {
        "package.json": '{"name": "shop", "private": true}',
        "lib/cart/total.js": """function subtotal(lines) {
  return lines.reduce((sum, line) => sum + line.price, 0);
}

function total(lines, code) {
  const discount = lookupDiscount(code);
  return subtotal(lines);
}

function lookupDiscount(code) {
  return code == 'VIP' ? 0.1 : 0;
}

module.exports = { total };
""",
        "lib/cart/discount.js": "function discount(code) {\n  return 0;\n}\n",
    }
    report = """/home/runner/work/shop/shop/lib/cart/total.js
  6:9  error  'discount' is assigned a value but never used  no-unused-vars

✖ 1 problem (1 error, 0 warnings)"""
    with Engine(_js_workspace(tmp_path / "app", app), tmp_path / "idx") as eng:
        res = eng.find(FindRequest(report))
    top = res.results[0]
    assert (top.path, top.symbol) == ("lib/cart/total.js", "total")
    assert "innermost-frame" in top.reasons and not res.insufficient


def test_a_file_that_declares_itself_generated_is_kept_when_a_frame_points_into_it(
    tmp_path: Path,
) -> None:
    """Generated files are left out of answers, but a trace or a report that names one is
    about it: it is shown, tagged ``generated`` (the fix goes to what generates it)."""
    app = {
        "package.json": '{"name": "shop", "private": true}',
        "lib/validator.js": "// This file is autogenerated by build/make.js, do not edit\n"
        + "function validate10(data) {\n  var ok = data != null;\n  return ok;\n}\n"
        + "module.exports = validate10;\n",
        "build/make.js": "function build() {\n  return 'validator';\n}\n",
    }
    report = """/home/runner/work/shop/shop/lib/validator.js
  3:3  warning  Unexpected var, use let or const instead  no-var

✖ 1 problem (0 errors, 1 warning)"""
    with Engine(_js_workspace(tmp_path / "app", app), tmp_path / "idx") as eng:
        framed = eng.find(FindRequest(report))
        asked = eng.find(FindRequest("where is the data validated"))
    top = framed.results[0]
    assert (top.path, top.symbol) == ("lib/validator.js", "validate10")
    assert {"innermost-frame", "generated"} <= set(top.reasons)
    assert all(r.path != "lib/validator.js" for r in asked.results)
