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

PY = """Traceback (most recent call last):
  File "/home/dev/shop/app.py", line 3, in <module>
    main()
  File "/home/dev/shop/src/shop/cart.py", line 20, in total
    subtotal -= subtotal * discount_for(self.code)
  File "/home/dev/shop/src/shop/pricing.py", line 6, in discount_for
    if code.startswith("VIP"):
AttributeError: 'NoneType' object has no attribute 'startswith'"""

JS = """TypeError: Cannot read properties of undefined (reading 'id')
    at getUser (/app/src/users.ts:42:17)
    at async handler (file:///app/src/routes/index.js:10:3)"""

GO = """panic: runtime error: index out of range [5] with length 3

goroutine 1 [running]:
main.lookup(...)
\t/home/u/proj/cmd/tool/main.go:12 +0x1d
main.main()
\t/home/u/proj/cmd/tool/main.go:20 +0x25"""

RUST = """thread 'main' panicked at src/parser.rs:88:14:
called `Option::unwrap()` on a `None` value"""

JAVA = """Exception in thread "main" java.lang.IllegalStateException: Queue full for group orders
\tat com.acme.queue.Broker.offer(Broker.java:57)
\tat com.acme.App.main(App.java:12)"""


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
