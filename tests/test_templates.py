"""Error messages: any ``Type: message`` line makes a failure question, a pasted message is
matched against the code's message templates (placeholders match any value) and the raise
sites of the named type, and must-match text comes only from what the user typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from code_evidence.api import Chunk, FindRequest, FindResult
from code_evidence.engine import Engine
from code_evidence.index.store import Store, StoredChunk
from code_evidence.search import templates
from code_evidence.search.candidate import Candidate
from code_evidence.search.explain import explain_result
from code_evidence.search.pipeline import evidence
from code_evidence.search.query import analyze
from code_evidence.search.recall import named_files
from code_evidence.search.stacktraces import typed_text
from code_evidence.search.verdict import judge


@pytest.mark.parametrize(
    "line",
    [
        "requests.exceptions.InvalidURL: Invalid port",
        "InvalidURL: Invalid port",
        'Error: required flag(s) "name" not set',
        "error[E0308]: mismatched types",
        "panic: runtime error: index out of range [3] with length 3",
        'Exception in thread "main" java.lang.IllegalStateException: closed',
        "please help\nclick.exceptions.BadParameter: Invalid value for '--n'",
        "PHP Fatal error:  Uncaught InvalidArgumentException: Invalid type in /srv/a.php:3",
        "Unhandled exception. System.ArgumentException: Value must be positive.",
        "lib/uri.rb:12:in 'parse': Invalid port 99999 (URI::InvalidURIError)",
    ],
)
def test_an_error_line_is_a_failure_question_whatever_its_prefix(line: str) -> None:
    qa = analyze(line)
    assert qa.intent == "fix-failure" and qa.messages


@pytest.mark.parametrize(
    ("line", "types", "body"),
    [
        (
            'PHP Fatal error:  Uncaught Twig\\Error\\SyntaxError: Cannot use "extend" in a'
            " block. in /srv/vendor/twig/src/TokenParser/ExtendsTokenParser.php:33",
            ["SyntaxError"],
            'Cannot use "extend" in a block.',
        ),
        (
            "Unhandled exception. Newtonsoft.Json.JsonReaderException: Unexpected end when"
            " reading bytes. Path 'a', line 1, position 5.",
            ["JsonReaderException"],
            "Unexpected end when reading bytes. Path 'a', line 1, position 5.",
        ),
        (
            "lib/thor/parser/arguments.rb:137:in `parse_numeric': Expected numeric value for"
            " '--n'; got x (Thor::MalformattedArgumentError)",
            ["MalformattedArgumentError"],
            "Expected numeric value for '--n'; got x",
        ),
        (
            'Exception in thread "main" java.lang.IllegalStateException: Stopwatch already'
            " started.",
            ["IllegalStateException"],
            "Stopwatch already started.",
        ),
    ],
)
def test_the_type_and_the_message_of_each_runtime_s_line(
    line: str, types: list[str], body: str
) -> None:
    """PHP's, .NET's and Ruby's own lines for an uncaught error: the type that a raise site
    throws (its last part: ``throw new SyntaxError(`` under a ``use``), and the text a literal
    produced, without the place PHP prints after it."""
    qa = analyze(line)
    assert qa.exception_types == types and qa.message_bodies == [body]


def test_an_error_line_s_runtime_prefix_and_namespace_are_not_search_words() -> None:
    """The words a runtime prints before the type and the namespace the type lives in match
    every file that imports from it (PHP's ``use`` lines), not the throw; the type's own name
    and the message stay."""
    qa = analyze(
        "PHP Fatal error:  Uncaught Symfony\\Component\\Console\\Exception\\"
        'CommandNotFoundException: Command "nope" is not defined.'
    )
    assert not {"php", "fatal", "uncaught", "symfony", "component", "console"} & set(qa.terms)
    assert {"commandnotfoundexception", "command", "defined"} <= set(qa.terms)
    ruby = analyze("cannot expand with keys [:bar] (Mustermann::ExpandError)")
    assert "mustermann" not in ruby.terms and "expand" in ruby.terms
    assert analyze("No such file or directory - /etc/app.yml (Errno::ENOENT)").intent == (
        "fix-failure"
    )


@pytest.mark.parametrize(
    "question",
    [
        "where is the port parsed",
        "TypeScript: where is the config read",
        "where is the session cache invalidated (Redis)",
    ],
)
def test_prose_with_a_colon_is_not_an_error_line(question: str) -> None:
    assert analyze(question).intent != "fix-failure"


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (
            'raise ValueError(f"Invalid value {x!r}: expected a port")',
            "Invalid value 'a': expected a port",
        ),
        ('raise KeyError("no section %s in %r" % (s, f))', "no section db in 'app.ini'"),
        ('raise Bad("missing {} of {}".format(a, b))', "missing host of url"),
        (
            "throw new Error(`Unknown plugin ${name} in registry`)",
            "Unknown plugin cors in registry",
        ),
        (
            'return fmt.Errorf("required flag(s) %q not set", name)',
            'required flag(s) "name" not set',
        ),
        ('#[error("invalid header value {0} for key")]', "invalid header value 12 for key"),
        ('panic!("buffer too small: {} < {}", a, b)', "buffer too small: 3 < 8"),
        (
            'throw new IllegalStateException(String.format("queue %s is full", q));',
            "queue orders is full",
        ),
        ('msg = "cannot open " + path + " for writing"', "cannot open /tmp/x for writing"),
        (
            'raise ArgumentError, "can only include below #{@script_name}, not #{path}"',
            "can only include below /app, not /etc",
        ),
        (
            'throw new \\RuntimeException("Unable to seek to stream position {$offset}");',
            "Unable to seek to stream position 12",
        ),
        ('throw new LogicException("Node $name->id does not exist");', "Node 7 does not exist"),
        ('fatalError("cannot decode \\(key) as a date")', "cannot decode createdAt as a date"),
        (  # Twig appends the template and line where the message's full stop was
            "throw new SyntaxError(sprintf('Unknown \"%s\" filter.', $name), $line);",
            'Unknown "nope" filter in "page.html" at line 3.',
        ),
        (  # an empty literal before the message does not steal its opening quote
            'return "", fmt.Errorf("mux: missing route variable %q", v)',
            'mux: missing route variable "id"',
        ),
        ("return '' . sprintf('Unknown \"%s\" option.', $n);", 'Unknown "v" option.'),
    ],
)
def test_templates_match_the_messages_they_produce(code: str, message: str) -> None:
    assert templates.best_template(code, [message]) is not None


def test_a_template_needs_its_pieces_in_order_and_enough_literal_text() -> None:
    assert templates.best_template('f"expected {a} before {b}"', ["before x expected y"]) is None
    assert templates.best_template('f"{a}: {b}"', ["host: none"]) is None  # no literal text
    long = templates.best_template('"Invalid port number"', ["Invalid port number"])
    short = templates.best_template('"Invalid port"', ["Invalid port number given by user"])
    assert long is not None and short is not None and long.coverage > short.coverage


def test_a_template_explains_its_message_whatever_the_values_formatted_in() -> None:
    """Coverage is of what the template wrote: a long value (a path, nlohmann's bracketed
    ``[json.exception.type_error.302]`` id) does not make the whole sentence a partial match."""
    body = "[json.exception.type_error.302] type must be string, but is number"
    match = templates.best_template('concat("type must be string, but is ", j.type_name())', [body])
    assert match is not None and templates.trusted(match.coverage)
    path = templates.best_template(
        'f"cannot open {path}"', ["cannot open /srv/app/settings/local.yml"]
    )
    assert path is not None and path.coverage == 1.0
    # The type named again inside the message, the runtime's ``what():`` and the type's
    # namespaces are not names the answer must define.
    qa = analyze(
        "terminate called after throwing an instance of 'nlohmann::json_abi_v3_11_2::detail::"
        f"type_error'\n  what():  {body}"
    )
    assert not {"json.exception.type_error", "what", "json_abi_v3_11_2"} & set(qa.identifiers)


FLAG_ERROR = (
    'invalid argument "abc" for "-n, --count" flag: strconv.ParseInt: parsing "abc": invalid syntax'
)
ESCAPED = FLAG_ERROR.replace('"', '\\"')


def test_a_template_that_wraps_an_error_writes_the_wrapped_text_too() -> None:
    """Go's ``fmt.Errorf("…: %v", err)`` (so Python's ``f"…: {e}"``, Rust's ``#[error("…:
    {0}")]``) formats another error's message in after its ": ": the whole printed chain is its
    text. A literal that does not end in ": " and a value gets no such credit, and a comment's
    quote is no template at all."""
    body = FLAG_ERROR
    wrap = 'return fmt.Errorf("invalid argument %q for %q flag: %v", value, flagName, err)'
    match = templates.best_template(wrap, [body])
    assert match is not None and match.coverage == 1.0
    # The wrapped error's own template explains its part only, and a literal whose value
    # closes it with no ": " before explains no more than its pieces.
    inner = templates.best_template('fmt.Errorf("parsing %q: invalid syntax", s)', [body])
    assert inner is not None and inner.coverage < 0.5
    closed = templates.best_template('f"{a} is not a valid {b}"', ["x is not a valid y: z w v"])
    assert closed is not None and closed.coverage < 0.7
    comment = "// that go along with 'unknown command' messages.\nfunc f() {}"
    assert templates.best_template(comment, ['unknown command "deploy" for "app"']) is None
    comments = "# 'not a message'\n/* 'nor this' */\n * 'nor this'\nx = 'one message'"
    assert templates.literals(comments) == ["one message"]


@pytest.mark.parametrize("name", ["ThreadPoolExecutor", "parse_args", "flask.Flask.run"])
def test_one_code_shaped_word_is_a_name_not_a_printed_message(name: str) -> None:
    """``ThreadPoolExecutor`` asked alone is a lookup: ``concurrent.futures``' ``__all__``
    and its lazy ``__getattr__`` spell it in literals, and read as a message they wrote all of
    it (``message-template``) and came first. A plain word may still be a message."""
    assert analyze(name).message_bodies == []
    assert analyze("Unauthorized").message_bodies == ["Unauthorized"]


def test_a_literal_that_is_one_name_wrote_no_message() -> None:
    """``asyncio/exceptions.py``'s ``__all__`` spells ``"TimeoutError"``: read as a template it
    wrote half of "TimeoutError in wait_for" and ranked the module's header. Error codes and
    plain words stay templates."""
    names = '__all__ = ("CancelledError", "TimeoutError", "InvalidStateError")'
    assert templates.best_template(names, ["TimeoutError in wait_for"]) is None
    code = "createError('FST_ERR_CTP_BODY_TOO_LARGE', 'Request body is too large')"
    assert templates.best_template(code, ["[FST_ERR_CTP_BODY_TOO_LARGE]"]) is not None
    assert templates.best_template("raise Forbidden('Unauthorized')", ["Unauthorized"]) is not None


def test_a_printed_message_is_asked_for_its_template_however_it_was_pasted() -> None:
    """A Go program prints the error it was returned and exits: the message alone, with ``go
    run``'s exit line or ``log``'s time, is read as a message; a chain's parts are searched for
    one by one; cobra's hint and usage under its ``Error:`` line are printed, not typed."""
    printed = 'invalid argument "abc" for "-n, --count" flag: strconv.ParseInt: parsing "abc"'
    for pasted in (printed, f"{printed}\nexit status 2", f"2026/12/03 17:41:07 {printed}\n"):
        qa = analyze(pasted)
        assert qa.message_bodies == [printed]
        assert ["invalid", "argument", "flag"] in qa.message_terms
    # A literal may write a message over a few lines: read joined, as the template reads
    # its line breaks; more lines than that are no one message.
    two = analyze(f"{printed}\nand then a second line of text")
    assert two.message_bodies == [f"{printed} and then a second line of text"]
    assert analyze("\n".join([printed] * 5)).message_bodies == []
    cobra = (
        'Error: unknown command "deploy" for "app"\nRun \'app --help\' for usage.\n'
        "Usage:\n  app [flags]\n\nFlags:\n  -h, --help   help for app\n\nexit status 1"
    )
    assert analyze(cobra).quoted == []
    assert typed_text(cobra).split() == []


GO_FLAGS = {
    "flag.go": """package flags

import "fmt"

// Set sets the value of the named flag.
func (f *FlagSet) Set(name, value string) error {
	flag, ok := f.formal[name]
	if !ok {
		return fmt.Errorf("no such flag -%v", name)
	}
	if err := flag.Value.Set(value); err != nil {
		flagName := fmt.Sprintf("-%s, --%s", flag.Shorthand, flag.Name)
		return fmt.Errorf("invalid argument %q for %q flag: %v", value, flagName, err)
	}
	f.actual[name] = flag
	return nil
}
""",
    "count.go": """package flags

import "strconv"

// -- count Value
type countValue int

// Set parses a count flag's value: a number, or +1 when the flag is given alone.
func (i *countValue) Set(s string) error {
	if s == "+1" {
		*i = countValue(*i + 1)
		return nil
	}
	v, err := strconv.ParseInt(s, 0, 0)
	*i = countValue(v)
	return err
}

// CountP defines a count flag with a shorthand: -n, --count.
func (f *FlagSet) CountP(name, shorthand, usage string) *int {
	p := new(int)
	f.VarP(newCountValue(0, p), name, shorthand, usage)
	return p
}
""",
    "int.go": """package flags

import "strconv"

type intValue int

// Set parses an int flag's value.
func (i *intValue) Set(s string) error {
	v, err := strconv.ParseInt(s, 0, 64)
	*i = intValue(v)
	return err
}
""",
}


@pytest.mark.parametrize(
    "pasted",
    [
        f"{FLAG_ERROR}\nexit status 2",  # go run's output
        f'time="2026-12-03T17:42:26Z" level=error msg="parse failed" error="{ESCAPED}"',  # logrus
        '{"level":50,"time":1764783746000,"pid":7,"hostname":"web-1","err":{"type":"Error",'
        f'"message":"{ESCAPED}","stack":"Error: x"}},"msg":"{ESCAPED}"}}',  # pino
    ],
)
def test_a_go_program_s_printed_error_finds_the_statement_that_wrote_it(
    tmp_path: Path, pasted: str
) -> None:
    """What a program shows for a flag it could not parse, printed or logged: the chain pflag's
    ``Set`` wrote, the value's words (``count``) and the wrapped ``strconv.ParseInt`` aside."""
    res = _answer(tmp_path, GO_FLAGS, pasted)
    assert res.results[0].symbol == "FlagSet.Set"
    assert res.results[0].scores["template_coverage"] == 1.0
    assert not res.insufficient


@pytest.mark.parametrize(
    "line",
    [
        "ERROR:root:{m}",  # Python's logging by default
        "2026-12-03 17:42:26,123 - app.cli - ERROR - {m}",  # Python's asctime format
        "[2026-12-03 17:42:26,123] ERROR in app: {m}",  # Flask's
        "[2026-12-03T17:42:26.123456+00:00] app.ERROR: {m} [] []",  # Monolog
        "E, [2026-12-03T17:42:26.123456 #4242] ERROR -- : {m}",  # Ruby's Logger
        "E1203 17:42:26.123456   4242 main.go:42] {m}",  # glog, klog
        "Dec 03, 2026 5:42:26 PM com.example.App run\nSEVERE: {m}",  # java.util.logging
        "17:42:26.123 [main] ERROR com.example.App - {m}",  # logback
        "2026-12-03 17:42:26.123 ERROR 4242 --- [  main] com.example.App  : {m}",  # Spring Boot
        "[2026-12-03T17:42:26Z ERROR app::db] {m}",  # env_logger
        '2026-12-03T17:42:26.123Z\tERROR\tcmd/main.go:42\t{m}\t{{"port": 80}}',  # zap
    ],
)
def test_a_log_line_s_prefix_is_the_logger_s(line: str) -> None:
    """The common formats that write a time, a level and a name before the message: the
    message is the error line, the rest is printed."""
    message = "mux: route doesn't have a host"
    qa = analyze(line.format(m=message))
    assert qa.messages == [f"Error: {message}"]
    assert typed_text(line.format(m=message)).strip() == ""


def test_a_log_line_s_message_and_error_are_its_error_lines() -> None:
    """A JSON or logfmt log record: its message and error are read as error lines; its keys,
    time, level and escaped quotes are the logger's, not typed. A JSON object with no level or
    time is no log record."""
    line = (
        'time="2026-12-03T17:42:26Z" level=error msg="building URL failed" '
        'error="mux: variable \\"latest\\" doesn\'t match"'
    )
    qa = analyze(line)
    assert qa.messages == [
        "Error: building URL failed",
        'Error: mux: variable "latest" doesn\'t match',
    ]
    assert qa.intent == "fix-failure" and qa.quoted == [] and typed_text(line).strip() == ""
    assert not {"time", "level", "msg"} & set(qa.terms)
    record = '{"level":"error","msg":"mux: route doesn\'t have a host","time":"2026-12-03"}'
    assert analyze(record).messages == ["Error: mux: route doesn't have a host"]
    assert analyze('why is {"message": "hello there"} rejected').messages == []


def test_a_table_of_addresses_is_not_a_message_template() -> None:
    """A module's table of URLs must not read as the template of a question quoting one of
    them; the address a function fetches still does."""
    question = "美国贸易帐报告，数据区间从 19700101-至今 https://data.example.com/report/usa_trade"
    rows = ["usa_trade", "usa_cpi", "euro_cpi", "china_pmi"]
    table = "\n".join(f'    "{r}": "https://data.example.com/report/{r}",' for r in rows)
    relative = table.replace("https:", "")
    assert templates.best_template(f"URLS = {{\n{table}\n}}", [question]) is None
    assert templates.best_template(f"URLS = {{\n{relative}\n}}", [question]) is None
    fetch = 'def usa_trade():\n    return get(f"https://data.example.com/report/{name}")'
    match = templates.best_template(fetch, [question])
    assert match is not None and match.coverage > 0.3


def test_an_address_matches_a_whole_address() -> None:
    """The site's home page in ``setup.py`` is not the page a question quotes."""
    question = "数据字段描述在 https://www.example.com/data/dict/fundamentals 中查看"
    assert templates.best_template('url="https://www.example.com/data",', [question]) is None
    page = 'URL = "https://www.example.com/data/dict/fundamentals"'
    assert templates.best_template(page, [question]) is not None
    said = "see https://www.example.com/data/dict/fundamentals."  # the sentence's full stop
    assert templates.best_template(page, [said]) is not None


def test_raise_sites_of_the_named_type() -> None:
    assert templates.raises("    raise InvalidURL(f'bad {u}')", "InvalidURL")
    assert templates.raises("throw new InvalidURL(u);", "InvalidURL")
    assert not templates.raises("class InvalidURL(ValueError):\n    pass", "InvalidURL")
    # Qualified as PHP, Ruby and C# write it.
    assert templates.raises(
        "throw new \\InvalidArgumentException('Invalid type');", "InvalidArgumentException"
    )
    assert templates.raises("throw new Exception\\LogicException('x');", "LogicException")
    assert templates.raises('raise URI::InvalidURIError, "bad"', "InvalidURIError")
    assert templates.raises('fail ArgumentError, "bad"', "ArgumentError")
    assert templates.raises("throw JsonReaderException.Create(this, msg);", "JsonReaderException")
    assert not templates.raises("class InvalidURIError < Error; end", "InvalidURIError")
    # Made, dressed, then thrown.
    made = "$e = new SyntaxError(sprintf('Unknown \"%s\" function.', $name));\nthrow $e;"
    assert templates.raises(made, "SyntaxError")
    assert not templates.raises("} catch (SyntaxError $e) {\n    throw $e;", "SyntaxError")
    assert not templates.raises("if ($e instanceof SyntaxError) {", "SyntaxError")
    assert not templates.raises("returnSyntaxError = 1; newSyntaxError()", "SyntaxError")
    # C++: a throwing macro, a helper that throws its template argument, a braced type.
    assert templates.raises("JSON_THROW(type_error::create(302, msg, &j));", "type_error")
    assert templates.raises("throw_or_mimic<exceptions::no_such_option>(arg);", "no_such_option")
    assert templates.raises("throw parse_error{ buf, pos, path };", "parse_error")
    assert not templates.raises("class type_error : public exception {", "type_error")
    # A C++ type is lower-case (``std::out_of_range``): raised when qualified, unlike a prefix.
    qa = analyze(
        "terminate called after throwing an instance of 'nlohmann::detail::type_error'\n"
        "  what():  [json.exception.type_error.302] type must be string, but is number"
    )
    assert qa.exception_types == ["type_error"]
    assert analyze("panic: runtime error: index out of range").exception_types == []


TRACE = """Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "/opt/venv/lib/python3.12/site-packages/rich/console.py", line 1429, in render
    raise NotRenderableError(f"Unable to render {renderable!r}")
rich.errors.NotRenderableError: Unable to render 'x'"""


def test_must_match_comes_only_from_what_the_user_typed() -> None:
    qa = analyze(TRACE)
    assert qa.quoted == [] and qa.error_codes == []
    assert "console.py" not in typed_text(TRACE)
    qa = analyze('why does "Unable to render" fail here\n' + TRACE)
    assert qa.quoted == ["Unable to render"]


def test_a_traceback_is_not_refused_for_its_frame_paths() -> None:
    # Before: the quoted frame paths ('<string>', '/opt/.../console.py') were must-match text,
    # which no result can hold, so a right answer was flagged insufficient.
    text = 'def render(x):\n    raise NotRenderableError(f"Unable to render {x!r}")'
    ch = Chunk("rich/console.py", 1, 2, "render", "function", "python", text, "h")
    top = Candidate(stored=StoredChunk(1, ch, None), fused=0.1, score=0.1)
    top.channel_scores["vector"] = 0.9
    verdict = judge(analyze(TRACE), None, [evidence(top)], 0.0)  # the rule, not the line
    assert verdict.reason is None and not verdict.insufficient
    typed = judge(analyze('where is "Unable to render it" raised'), None, [evidence(top)], 0.3)
    assert typed.insufficient  # a quoted phrase the user typed still must match


SOURCE = {
    "net/errors.py": '''
class InvalidURL(ValueError):
    """The URL cannot be parsed."""


class InvalidHeader(ValueError):
    """A header value is not valid."""
''',
    "net/urls.py": """
from .errors import InvalidURL


def parse_port(text: str) -> int:
    if not text.isdigit():
        raise InvalidURL(f"Invalid port: {text!r} is not a number")
    return int(text)


def parse_host(text: str) -> str:
    if not text:
        raise InvalidURL("Invalid host: empty")
    return text
""",
}


def _workspace(tmp_path: Path, files: dict[str, str]) -> Path:
    ws = tmp_path / "ws"
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ws


def _answer(tmp_path: Path, files: dict[str, str], question: str) -> FindResult:
    """One question asked of a fresh workspace holding ``files``."""
    with Engine(_workspace(tmp_path, files), tmp_path / "idx") as eng:
        return eng.find(FindRequest(question))


def test_a_pasted_message_finds_the_raise_before_the_class(tmp_path: Path) -> None:
    res = _answer(tmp_path, SOURCE, "net.errors.InvalidURL: Invalid port: '80a' is not a number")
    assert res.results[0].symbol == "parse_port"
    assert {"message-template", "raises"} <= set(res.results[0].reasons)
    assert not res.insufficient
    # --explain says how much of the message's text the literal writes: all of it (the value
    # '80a' is no template's text).
    share = res.results[0].scores["template_coverage"]
    assert share == 1.0
    assert "writes 100% of the pasted message's text" in explain_result(res.results[0])


PHP_SOURCE = {
    "src/Exception/InvalidStreamException.php": """<?php
namespace Acme\\Http\\Exception;

/** Thrown when a stream cannot be read, written or moved. */
class InvalidStreamException extends \\RuntimeException
{
}
""",
    "src/Stream.php": """<?php
namespace Acme\\Http;

use Acme\\Http\\Exception\\InvalidStreamException;

final class Stream
{
    public function seek(int $offset): void
    {
        if (!$this->seekable) {
            throw new InvalidStreamException("Unable to seek to stream position {$offset}");
        }
    }

    public function read(int $length): string
    {
        if ($length < 0) {
            throw new InvalidStreamException('Length parameter cannot be negative');
        }
        return fread($this->stream, $length);
    }
}
""",
}
RUBY_SOURCE = {
    "lib/acme/errors.rb": """module Acme
  # Raised when a query string is too large or too deep to parse.
  class QueryLimitError < RangeError
  end
end
""",
    "lib/acme/query_parser.rb": """module Acme
  class QueryParser
    def check_size(qs)
      if qs.bytesize > @limit
        raise QueryLimitError, "total query size (#{qs.bytesize}) exceeds limit (#{@limit})"
      end
    end

    def check_depth(depth)
      raise QueryLimitError, "query nesting exceeds depth #{@depth_limit}" if depth > @depth_limit
    end
  end
end
""",
}


@pytest.mark.parametrize(
    ("files", "line", "symbol"),
    [
        (
            PHP_SOURCE,
            "PHP Fatal error:  Uncaught Acme\\Http\\Exception\\InvalidStreamException: Unable to"
            " seek to stream position 4096 in /srv/app/vendor/acme/http/src/Stream.php:12",
            "Stream.seek",
        ),
        (
            RUBY_SOURCE,
            "lib/acme/query_parser.rb:5:in 'Acme::QueryParser#check_size': total query size"
            " (5000000) exceeds limit (4194304) (Acme::QueryLimitError)",
            "Acme.QueryParser.check_size",
        ),
        (
            RUBY_SOURCE,
            "total query size (5000000) exceeds limit (4194304) (Acme::QueryLimitError)",
            "Acme.QueryParser.check_size",
        ),
    ],
)
def test_php_and_ruby_errors_find_the_throw_before_the_class(
    tmp_path: Path, files: dict[str, str], line: str, symbol: str
) -> None:
    """PHP's and Ruby's own lines for an uncaught error (the type qualified with ``\\`` and
    ``::``, Ruby's last, in parentheses; a message built with ``{$x}`` and ``#{x}``): the
    throw that wrote it first, not the class named in it."""
    res = _answer(tmp_path, files, line)
    assert res.intent == "fix-failure"
    assert res.results[0].symbol == symbol
    assert "message-template" in res.results[0].reasons


def test_a_template_deep_in_a_long_function_is_recalled_by_the_message_s_words(
    tmp_path: Path,
) -> None:
    """The keyword channel ranks the chunks that name the exception (its class, every
    ``throw``) above a long function that writes the message once; the chunks that hold every
    literal word of the message join the channel after its own hits, so the template is read
    (``recall_k`` 3 here stands for a large project's hundred)."""
    users = {
        f"src/Loader{i}.php": (
            "<?php\nnamespace App;\n\nuse App\\Exception\\NotFoundException;\n\n"
            f"final class Loader{i}\n{{\n    public function get(string $name)\n    {{\n"
            "        throw new NotFoundException(sprintf('No loader for \"%s\".', $name));\n"
            "    }\n}\n"
        )
        for i in range(6)
    }
    body = "\n".join(f"        $step{i} = $this->step{i}($name, $all);" for i in range(40))
    files = {
        ".code-evidence.toml": "[ranking]\nrecall_k = 3\n",
        "src/Exception/NotFoundException.php": (
            "<?php\nnamespace App\\Exception;\n\n/** A command, loader or namespace was not"
            " found. */\nclass NotFoundException extends \\RuntimeException\n{\n}\n"
        ),
        **users,
        "src/Application.php": (
            "<?php\nnamespace App;\n\nuse App\\Exception\\NotFoundException;\n\n"
            "final class Application\n{\n    public function find(string $name)\n    {\n"
            f"{body}\n"
            "        $message = sprintf('Command \"%s\" is not defined.', $name);\n"
            "        throw new NotFoundException($message);\n    }\n}\n"
        ),
    }
    res = _answer(
        tmp_path,
        files,
        'PHP Fatal error:  Uncaught App\\Exception\\NotFoundException: Command "nope" is not'
        " defined.",
    )
    assert res.results[0].symbol == "Application.find"
    assert "message-template" in res.results[0].reasons


TESTED = {
    "app/config.py": """
import os


class Config(dict):
    def from_pyfile(self, filename, silent=False):
        try:
            with open(filename, "rb") as f:
                self.update(eval(f.read()))
        except OSError as e:
            if silent:
                return False
            e.strerror = f"Unable to load configuration file ({e.strerror})"
            raise
        return True
""",
    "tests/test_config.py": """
import os

import pytest

from app.config import Config


def test_config_missing():
    with pytest.raises(IOError) as e:
        Config().from_pyfile("missing.cfg")
    msg = str(e.value)
    assert msg.startswith(
        "[Errno 2] Unable to load configuration file (No such file or directory):"
    )
    assert msg.endswith("missing.cfg'")


def test_config_from_envvar_missing(monkeypatch):
    monkeypatch.setenv("SETTINGS", "missing.cfg")
    with pytest.raises(IOError) as e:
        Config().from_pyfile(os.environ["SETTINGS"])
    msg = str(e.value)
    assert msg.startswith(
        "[Errno 2] Unable to load configuration file (No such file or directory):"
    )
""",
}


def test_a_test_that_expects_the_message_ranks_below_the_code_that_produces_it(
    tmp_path: Path,
) -> None:
    # The test holds the whole message verbatim, the code only its template: before, the
    # message votes went to the test, which came first.
    ws = _workspace(tmp_path, TESTED)
    message = (
        "FileNotFoundError: [Errno 2] Unable to load configuration file "
        "(No such file or directory): '/srv/app/settings.cfg'"
    )
    with Engine(ws, tmp_path / "idx") as eng:
        res = eng.find(FindRequest(message))
        paths = [r.path for r in res.results]
        assert paths[0] == "app/config.py"
        test = res.results[paths.index("tests/test_config.py")]
        assert {"test", "error-message"} <= set(test.reasons)  # what it holds, still said
        # Asked about the tests, the test that checks the message is the answer.
        asked = eng.find(FindRequest(f"which test checks {message}"))
        assert asked.results[0].path == "tests/test_config.py"


def test_docstrings_are_not_message_templates() -> None:
    code = 'def client():\n    """Creates a test client for this application."""\n    return 1\n'
    assert templates.literals(code) == []
    assert templates.best_template(code, ["Creates a test client for this application."]) is None


def _regex_best_template(text: str, bodies: list[str]) -> templates.TemplateMatch | None:
    """The matcher as it was before literal regexes gave way to an in-order substring search:
    each literal compiled to ``piece.*?piece`` (dot matching newlines), searched in each body."""
    import re

    best = None
    for literal in templates.literals(text):
        split = literal
        for k, v in templates._ESCAPES.items():
            split = split.replace(k, v)
        pieces = templates._PLACEHOLDER.split(split)
        if pieces[-1].endswith(".") and not pieces[-1].endswith(".."):
            pieces[-1] = pieces[-1][:-1]  # a wrapper may append where the full stop was
        fixed = sum(len(p.strip()) for p in pieces)
        if fixed < templates.MIN_LITERAL or templates._CAMEL_NAME.fullmatch(literal):
            continue  # too short, or a name
        pieces = [p for p in pieces if p]
        pattern = re.compile(".*?".join(f"({re.escape(p)})" for p in pieces), re.S)
        for body in bodies:
            m = pattern.search(body) if body else None
            if m is None:
                continue
            # Coverage: the message's written characters (not space, not a value) the pieces
            # cover, over all of them.
            counts = templates.written(body)
            covered = sum(counts[m.end(i)] - counts[m.start(i)] for i in range(1, len(pieces) + 1))
            if templates._WRAP_END.search(split):  # the wrapped error's text follows its end
                covered += counts[-1] - counts[m.end(len(pieces))]
            coverage = min(1.0, covered / max(1, counts[-1]))
            if coverage >= templates.MIN_COVERAGE and (best is None or coverage > best.coverage):
                best = templates.TemplateMatch(coverage, literal)
    return best


def test_best_template_finds_what_the_literal_regexes_found() -> None:
    """On this package's own source (every literal it holds) against messages made from its
    literals with values formatted in, cut, shuffled and unrelated, the substring matcher gives
    the regex matcher's answer every time, coverage and literal."""
    import random

    rng = random.Random(5)
    root = Path(templates.__file__).parents[1]
    sources = [p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))]
    pool = [lit for text in sources for lit in templates.literals(text)]
    assert len(pool) > 500
    values = ["42", "'x'", "None", "/tmp/a b", "{", "%s", "\n", "héllo"]
    checked = matched = 0
    for text in sources:
        lines = text.splitlines()
        for start in range(0, len(lines), 40):
            chunk = "\n".join(lines[start : start + 40])
            bodies = []
            for lit in rng.sample(pool, 3):
                body = templates._PLACEHOLDER.sub(lambda _: rng.choice(values), lit)
                cut = rng.randrange(len(body) + 1)
                swapped = " 7 ".join(reversed(templates._PLACEHOLDER.split(lit)))  # order broken
                bodies.append(rng.choice([body, body[:cut], body[cut:] + body[:cut], swapped]))
            own = templates.literals(chunk)
            if own:
                lit = rng.choice(own)
                bodies.append(templates._PLACEHOLDER.sub(lambda _: rng.choice(values), lit))
            want = _regex_best_template(chunk, bodies)
            assert templates.best_template(chunk, bodies) == want, (chunk[:200], bodies)
            checked += 1
            matched += want is not None
    assert checked > 300 and matched > 50  # both outcomes are exercised
    # Pieces that overlap in the message: each must have its own characters.
    assert templates.best_template('f"abcab{x}abcab"', ["abcabcab"]) is None
    assert _regex_best_template('f"abcab{x}abcab"', ["abcabcab"]) is None
    assert templates.best_template('f"abcab{x}abcab"', ["abcababcab"]) is not None


@pytest.mark.parametrize(
    ("message", "names", "files"),
    [
        ("AttributeError: 'Request' object has no attribute 'is_xhr'", ["Request", "is_xhr"], []),
        ("AttributeError: 'NoneType' object has no attribute 'app'", ["app"], []),
        ("AttributeError: type object 'Rule' has no attribute 'empty'", ["Rule", "empty"], []),
        (
            "ImportError: cannot import name 'url_quote' from 'werkzeug.urls' "
            "(/venv/lib/python3.12/site-packages/werkzeug/urls.py)",
            ["url_quote"],
            ["werkzeug/urls.py", "werkzeug/urls/__init__.py"],
        ),
        (
            "AttributeError: module 'jinja2.constants' has no attribute 'Mul'",
            ["Mul"],
            ["jinja2/constants.py", "jinja2/constants/__init__.py"],
        ),
        ("ModuleNotFoundError: No module named 'yaml'", [], ["yaml.py", "yaml/__init__.py"]),
        ("NameError: name 'render_form' is not defined", ["render_form"], []),
        # Node's V8: the receiver is a variable, the last name is the program's.
        ("TypeError: req.acceptsEncoding is not a function", ["acceptsEncoding"], []),
        ("TypeError: this.router.handle is not a function", ["handle"], []),
        ("TypeError: Layer is not a constructor", ["Layer"], []),
        (
            "TypeError: Cannot read properties of undefined (reading 'acceptsLanguages')",
            ["acceptsLanguages"],
            [],
        ),
        ("TypeError: Cannot read property 'headers' of null", ["headers"], []),
        ("ReferenceError: compileQueryParser is not defined", ["compileQueryParser"], []),
        ("TypeError: Class constructor Router cannot be invoked without 'new'", ["Router"], []),
        (
            "SyntaxError: The requested module './utils.js' does not provide an export named "
            "'setCharset'",
            ["setCharset"],
            ["utils.js", "utils.ts"],
        ),
        (
            "Error: Cannot find module '../router/layer'",
            [],
            ["router/layer.js", "router/layer.ts", "router/layer/index.js"],
        ),
    ],
)
def test_a_message_the_interpreter_writes_names_the_programs_code(
    message: str, names: list[str], files: list[str]
) -> None:
    # Its quoted parts are the program's names, not values formatted in; no `raise` in the
    # workspace wrote it, so raise sites of its type are no evidence.
    qa = analyze(message)
    assert set(names) <= set(qa.identifiers) and "NoneType" not in qa.identifiers
    assert set(files) <= set(qa.paths)
    assert qa.exception_types == []
    # A message of the program's own keeps its quoted values out and its raise sites in.
    own = analyze("BuildError: Could not build url for endpoint 'index'")
    assert "index" not in own.identifiers and own.exception_types == ["BuildError"]


@pytest.mark.parametrize(
    ("question", "paths", "header"),
    [
        ("the scripts in package.json", ["package.json"], False),
        ("crash in main.cpp:40, see index.html", ["main.cpp", "index.html"], False),
        ("Button.tsx renders twice", ["Button.tsx"], False),
        ("where is util.hpp included", ["util.hpp"], True),
        # Dotted modules are no files: not ``jinja2.c``, not the header ``flask.h``.
        ("jinja2.constants and flask.helpers", [], False),
    ],
)
def test_a_file_name_ends_at_its_extension(question: str, paths: list[str], header: bool) -> None:
    qa = analyze(question)
    assert qa.paths == paths and qa.about_declarations == header


RUNTIME = {
    "web/wrappers.py": """
class Request:
    \"\"\"An incoming WSGI request: headers, form data and the body.\"\"\"

    def __init__(self, environ):
        self.environ = environ

    @property
    def is_json(self):
        return self.environ.get("CONTENT_TYPE") == "application/json"
""",
    "web/local.py": """
class Local:
    \"\"\"Context-local storage.\"\"\"

    def __getattr__(self, name):
        try:
            return self._storage[name]
        except KeyError:
            raise AttributeError(name) from None
""",
    "web/urls.py": """
def url_parse(url):
    return url.split("/")


def iri_to_uri(iri):
    return iri.encode("idna")
""",
    "web/util.py": """
def url_quote(text):
    return text.replace(" ", "%20")
""",
    "web/__init__.py": """
from .local import Local
from .urls import iri_to_uri
from .wrappers import Request
""",
}


def test_an_interpreter_message_finds_the_type_and_the_module_it_names(tmp_path: Path) -> None:
    # Before: `Local.__getattr__` came first ("raises" AttributeError), the Request class not
    # at all by name; the module a failed import names came after where the name lives.
    ws = _workspace(tmp_path, RUNTIME)
    with Engine(ws, tmp_path / "idx") as eng:
        res = eng.find(FindRequest("AttributeError: 'Request' object has no attribute 'is_xhr'"))
        assert res.results[0].symbol == "Request"
        assert all("raises" not in r.reasons for r in res.results)
        message = "ImportError: cannot import name 'url_parse' from 'web.util' (/x/web/util.py)"
        imp = eng.find(FindRequest(message))
        top = [r.path for r in imp.results[:2]]
        assert set(top) == {"web/util.py", "web/urls.py"}  # the module named, and the name's
        assert "path-match" in imp.results[top.index("web/util.py")].reasons
        # A module whose text shares no word with the message is still found by its name.
        pkg = eng.find(FindRequest("AttributeError: module 'web' has no attribute 'version'"))
        assert pkg.results[0].path == "web/__init__.py"
        assert "recall.named" in pkg.trace


def test_a_line_the_question_points_at_comes_first(tmp_path: Path) -> None:
    # The words fit `iri_to_uri` ("uri"); the user points at url_parse's line. Before, the
    # parsed line was never read.
    res = _answer(tmp_path, RUNTIME, "web/urls.py:3 returns the wrong uri")
    assert res.results[0].symbol == "url_parse"
    assert {"named", "path-match"} <= set(res.results[0].reasons)


def test_the_files_a_question_names_are_found_by_path_or_tail(tmp_path: Path) -> None:
    paths = ["src/web/urls.py", "src/web/__init__.py", "a/utils.py", "b/utils.py", "c/utils.py"]
    store = Store(tmp_path / "store.sqlite")

    def add(path: str) -> None:
        store.db.execute(
            "INSERT INTO files(path, size, mtime_ns, content_hash) VALUES(?, 1, 0, 'h')", (path,)
        )

    for path in [*paths, "src/Web/URLs.py"]:
        add(path)
    found = named_files(["web/urls.py", "web/__init__.py"], store.paths_ending)
    assert found == paths[:2]  # not src/Web/URLs.py: case matters
    assert named_files(["src/web/urls.py", "urls.py", "eb/urls.py"], store.paths_ending) == [
        paths[0]
    ]
    assert named_files(["utils.py"], store.paths_ending) == paths[2:]
    add("d/utils.py")
    assert named_files(["utils.py"], store.paths_ending) == []  # names none of the four
    # The headline's files, not those a change description's bullets or a trace's frames name.
    described = analyze("test(debug): cover debug.go\n\n* fix logger.go\n* CHANGES.rst")
    assert described.named_paths == ["debug.go"] and "logger.go" in described.paths
    assert analyze(PY_TRACE).named_paths == []


PY_TRACE = """Traceback (most recent call last):
  File "src/web/urls.py", line 3, in url_parse
KeyError: 'scheme'"""


def test_a_program_s_own_prefix_is_matched_with_its_text() -> None:
    """commander writes ``error: `` in the same literal as its message: the whole line is the
    template's text, while the body alone does not hold the literal's first piece."""
    line = "error: required option '-p, --port <number>' not specified"
    qa = analyze(line)
    code = "const message = `error: required option '${option.flags}' not specified`;"
    assert templates.best_template(code, [qa.message_bodies[0]]) is None
    match = templates.best_template(code, qa.message_bodies)
    assert match is not None and match.coverage == 1.0
    # A type's name or the runtime's ``panic:`` is no part of the program's literal.
    assert analyze("ValueError: bad value 3").message_bodies == ["bad value 3"]
    assert analyze("panic: index out of range").message_bodies == ["index out of range"]


def test_a_message_a_literal_writes_over_lines_is_matched_whole() -> None:
    """httpx writes its redirect message over three lines from one literal (``\\n`` inside):
    pasted as printed, without its type, the lines are read joined and the literal writes
    all of them; what it quotes is a value, so no must-find refusal."""
    pasted = (
        "Redirect response '301 Moved Permanently' for url 'http://example.com/a'\n"
        "Redirect location: '/b'\n"
        "For more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/301"
    )
    code = (
        "message = (\n"
        "    \"{error_type} '{0.status_code} {0.reason_phrase}' for url '{0.url}'\\n\"\n"
        "    \"Redirect location: '{0.headers[location]}'\\n\"\n"
        '    "For more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/'
        'Status/{0.status_code}"\n)'
    )
    qa = analyze(pasted)
    match = templates.best_template(code, qa.message_bodies)
    assert match is not None and match.coverage >= 0.3
