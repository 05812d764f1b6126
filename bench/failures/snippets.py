"""The failing snippets: small, plausible user mistakes that make the library's own code raise.

Each snippet is run as ``python - < snippet`` against a workspace (see ``make_cases.py``), so its
frames show as ``<stdin>``. A snippet only becomes a case when the exception comes out of the
library: the innermost workspace frame must be library code with no snippet frame after it. The
same list runs against every version of a library; a snippet that does not fail that way on some
version (an API that moved, a check that did not exist yet) is skipped there, not edited.
"""

from __future__ import annotations

from textwrap import dedent


def _s(name: str, code: str) -> tuple[str, str]:
    return name, dedent(code).strip() + "\n"


FLASK: tuple[tuple[str, str], ...] = (
    _s(
        "current-app-outside-context",
        """
        from flask import current_app
        print(current_app.config["DEBUG"])
        """,
    ),
    _s(
        "url-for-outside-context",
        """
        from flask import url_for
        url_for("index")
        """,
    ),
    _s(
        "url-for-unknown-endpoint",
        """
        from flask import Flask, url_for
        app = Flask(__name__)
        with app.test_request_context():
            url_for("does_not_exist")
        """,
    ),
    _s(
        "url-for-scheme-without-external",
        """
        from flask import Flask, url_for
        app = Flask(__name__)
        app.add_url_rule("/", "index", lambda: "hi")
        with app.test_request_context():
            url_for("index", _scheme="https")
        """,
    ),
    _s(
        "config-from-envvar-unset",
        """
        from flask import Flask
        app = Flask(__name__)
        app.config.from_envvar("YOURAPPLICATION_SETTINGS")
        """,
    ),
    _s(
        "config-from-envvar-missing-file",
        """
        import os
        from flask import Flask
        os.environ["YOURAPPLICATION_SETTINGS"] = "settings.cfg"
        app = Flask(__name__)
        app.config.from_envvar("YOURAPPLICATION_SETTINGS")
        """,
    ),
    _s(
        "config-from-pyfile-missing",
        """
        from flask import Flask
        app = Flask(__name__)
        app.config.from_pyfile("production.cfg")
        """,
    ),
    _s(
        "config-from-pyfile-syntax-error",
        """
        from pathlib import Path
        from flask import Flask
        Path("broken.cfg").write_text("SECRET_KEY = 'abc\\nDEBUG = True\\n")
        app = Flask(__name__)
        app.config.from_pyfile("broken.cfg")
        """,
    ),
    _s(
        "config-from-file-missing",
        """
        import json
        from flask import Flask
        app = Flask(__name__)
        app.config.from_file("config.json", load=json.load)
        """,
    ),
    _s(
        "config-from-file-bad-json",
        """
        import json
        from pathlib import Path
        from flask import Flask
        Path("config.json").write_text("{'DEBUG': true}")
        app = Flask(__name__)
        app.config.from_file("config.json", load=json.load)
        """,
    ),
    _s(
        "config-from-object-bad-import",
        """
        from flask import Flask
        app = Flask(__name__)
        app.config.from_object("yourapplication.default_settings")
        """,
    ),
    _s(
        "endpoint-overwrite",
        """
        from flask import Flask
        app = Flask(__name__)

        @app.route("/")
        def index():
            return "index"

        def other():
            return "other"

        app.add_url_rule("/other", "index", other)
        """,
    ),
    _s(
        "route-methods-string",
        """
        from flask import Flask
        app = Flask(__name__)

        @app.route("/login", methods="POST")
        def login():
            return "ok"
        """,
    ),
    _s(
        "add-url-rule-without-view",
        """
        from flask import Flask
        app = Flask(__name__)
        app.add_url_rule("/nothing")
        """,
    ),
    _s(
        "blueprint-name-with-dot",
        """
        from flask import Blueprint
        bp = Blueprint("admin.users", __name__)
        """,
    ),
    _s(
        "blueprint-empty-name",
        """
        from flask import Blueprint
        bp = Blueprint("", __name__)
        """,
    ),
    _s(
        "blueprint-endpoint-with-dot",
        """
        from flask import Blueprint
        bp = Blueprint("admin", __name__)
        bp.add_url_rule("/users", "users.list", lambda: "users")
        """,
    ),
    _s(
        "blueprint-registered-twice",
        """
        from flask import Blueprint, Flask
        app = Flask(__name__)
        bp = Blueprint("admin", __name__)
        other = Blueprint("admin", __name__)
        app.register_blueprint(bp)
        app.register_blueprint(other)
        """,
    ),
    _s(
        "blueprint-on-itself",
        """
        from flask import Blueprint
        bp = Blueprint("admin", __name__)
        bp.register_blueprint(bp)
        """,
    ),
    _s(
        "blueprint-setup-after-register",
        """
        from flask import Blueprint, Flask
        app = Flask(__name__)
        bp = Blueprint("admin", __name__)
        app.register_blueprint(bp)
        app.test_client().get("/")

        @bp.route("/late")
        def late():
            return "late"
        """,
    ),
    _s(
        "app-setup-after-first-request",
        """
        from flask import Flask
        app = Flask(__name__)
        app.test_client().get("/")

        @app.route("/late")
        def late():
            return "late"
        """,
    ),
    _s(
        "render-template-missing",
        """
        from flask import Flask, render_template
        app = Flask(__name__)
        with app.app_context():
            render_template("index.html", title="Home")
        """,
    ),
    _s(
        "render-template-outside-context",
        """
        from flask import render_template
        render_template("index.html")
        """,
    ),
    _s(
        "render-template-string-undefined",
        """
        from flask import Flask, render_template_string
        app = Flask(__name__)
        with app.app_context():
            render_template_string("Hello {{ user.name.first }}")
        """,
    ),
    _s(
        "session-without-secret-key",
        """
        from flask import Flask, session
        app = Flask(__name__)
        with app.test_request_context():
            session["user_id"] = 42
        """,
    ),
    _s(
        "flash-without-secret-key",
        """
        from flask import Flask, flash
        app = Flask(__name__)
        with app.test_request_context():
            flash("Saved")
        """,
    ),
    _s(
        "jsonify-args-and-kwargs",
        """
        from flask import Flask, jsonify
        app = Flask(__name__)
        with app.app_context():
            jsonify([1, 2], status="ok")
        """,
    ),
    _s(
        "jsonify-not-serializable",
        """
        from flask import Flask, jsonify
        app = Flask(__name__)
        with app.app_context():
            jsonify({"when": object()})
        """,
    ),
    _s(
        "jsonify-mixed-keys-sorted",
        """
        from flask import Flask, jsonify
        app = Flask(__name__)
        with app.app_context():
            jsonify({1: "one", "two": 2})
        """,
    ),
    _s(
        "json-loads-invalid",
        """
        from flask import Flask, json
        app = Flask(__name__)
        with app.app_context():
            json.loads("{'a': 1}")
        """,
    ),
    _s(
        "request-get-json-invalid",
        """
        from flask import Flask, request
        app = Flask(__name__)
        with app.test_request_context(
            "/", method="POST", data="{not json", content_type="application/json"
        ):
            request.get_json()
        """,
    ),
    _s(
        "abort-unknown-status",
        """
        from flask import abort
        abort(499)
        """,
    ),
    _s(
        "view-returns-none",
        """
        from flask import Flask
        app = Flask(__name__)
        app.testing = True

        @app.route("/")
        def index():
            print("handled")

        app.test_client().get("/")
        """,
    ),
    _s(
        "view-returns-int",
        """
        from flask import Flask
        app = Flask(__name__)
        app.testing = True

        @app.route("/count")
        def count():
            return 42

        app.test_client().get("/count")
        """,
    ),
    _s(
        "view-returns-long-tuple",
        """
        from flask import Flask
        app = Flask(__name__)
        app.testing = True

        @app.route("/")
        def index():
            return "body", 200, {"X-A": "1"}, "extra"

        app.test_client().get("/")
        """,
    ),
    _s(
        "async-view-without-asgiref",
        """
        from flask import Flask
        app = Flask(__name__)
        app.testing = True

        @app.route("/")
        async def index():
            return "hi"

        app.test_client().get("/")
        """,
    ),
    _s(
        "send-static-file-no-folder",
        """
        from flask import Flask
        app = Flask(__name__, static_folder=None)
        with app.test_request_context():
            app.send_static_file("style.css")
        """,
    ),
    _s(
        "open-resource-write-mode",
        """
        from flask import Flask
        app = Flask(__name__)
        app.open_resource("schema.sql", "w")
        """,
    ),
    _s(
        "stream-with-context-outside-request",
        """
        from flask import stream_with_context

        def generate():
            yield "data"

        stream_with_context(generate())
        """,
    ),
    _s(
        "copy-request-context-outside-request",
        """
        from flask import copy_current_request_context

        @copy_current_request_context
        def work():
            return 1
        """,
    ),
    _s(
        "app-context-pop-without-push",
        """
        from flask import Flask
        app = Flask(__name__)
        app.app_context().pop()
        """,
    ),
    _s(
        "error-handler-unknown-code",
        """
        from flask import Flask
        app = Flask(__name__)

        @app.errorhandler(499)
        def client_closed(e):
            return "closed", 499
        """,
    ),
    _s(
        "error-handler-not-exception",
        """
        from flask import Flask
        app = Flask(__name__)
        app.register_error_handler(str, lambda e: ("bad", 500))
        """,
    ),
    _s(
        "error-handler-instance",
        """
        from flask import Flask
        app = Flask(__name__)
        app.register_error_handler(ValueError("bad"), lambda e: ("bad", 500))
        """,
    ),
    _s(
        "class-view-without-dispatch",
        """
        from flask import Flask
        from flask.views import View
        app = Flask(__name__)
        app.testing = True

        class UserList(View):
            pass

        app.add_url_rule("/users", view_func=UserList.as_view("users"))
        app.test_client().get("/users")
        """,
    ),
    _s(
        "method-view-unimplemented-method",
        """
        from flask import Flask
        from flask.views import MethodView
        app = Flask(__name__)
        app.testing = True

        class UserAPI(MethodView):
            def get(self):
                return "users"

        app.add_url_rule("/users", view_func=UserAPI.as_view("users"), methods=["GET", "POST"])
        app.test_client().post("/users")
        """,
    ),
    _s(
        "session-cookie-bad-samesite",
        """
        from flask import Flask, session
        app = Flask(__name__)
        app.testing = True
        app.secret_key = "dev"
        app.config["SESSION_COOKIE_SAMESITE"] = "Sometimes"

        @app.route("/")
        def index():
            session["seen"] = True
            return "ok"

        app.test_client().get("/")
        """,
    ),
    _s(
        "make-response-outside-context",
        """
        from flask import make_response
        make_response("hello")
        """,
    ),
    _s(
        "get-flashed-messages-outside-request",
        """
        from flask import get_flashed_messages
        get_flashed_messages()
        """,
    ),
    _s(
        "send-file-outside-request",
        """
        import io
        from flask import send_file
        send_file(io.BytesIO(b"data"), download_name="data.bin")
        """,
    ),
    _s(
        "cli-load-app-not-found",
        """
        from flask.cli import ScriptInfo
        ScriptInfo().load_app()
        """,
    ),
    _s(
        "cli-locate-app-import-error",
        """
        from flask.cli import ScriptInfo
        ScriptInfo(app_import_path="yourapplication.wsgi:app").load_app()
        """,
    ),
    _s(
        "cli-find-best-app-empty-module",
        """
        import types
        from flask.cli import find_best_app
        find_best_app(types.ModuleType("hello"))
        """,
    ),
    _s(
        "cli-find-app-by-string-bad-syntax",
        """
        import types
        from flask.cli import find_app_by_string
        find_app_by_string(types.ModuleType("hello"), "create_app(")
        """,
    ),
    _s(
        "cli-find-app-by-string-missing-attr",
        """
        import types
        from flask.cli import find_app_by_string
        find_app_by_string(types.ModuleType("hello"), "application")
        """,
    ),
    _s(
        "test-client-session-transaction-no-key",
        """
        from flask import Flask
        app = Flask(__name__)
        with app.test_client() as client:
            with client.session_transaction() as sess:
                sess["user"] = "admin"
        """,
    ),
    _s(
        "request-context-pop-wrong-order",
        """
        from flask import Flask
        app = Flask(__name__)
        outer = app.test_request_context("/a")
        inner = app.test_request_context("/b")
        outer.push()
        inner.push()
        outer.pop()
        """,
    ),
)


CLICK: tuple[tuple[str, str], ...] = (
    _s(
        "callback-missing-parameter",
        """
        import click

        @click.command()
        @click.option("--name")
        def hello(name, count):
            click.echo(name)

        hello.main(["--name", "x"], standalone_mode=False)
        """,
    ),
    _s(
        "no-such-option",
        """
        import click

        @click.command()
        @click.option("--name")
        def hello(name):
            click.echo(name)

        hello.main(["--nmae", "x"], standalone_mode=False)
        """,
    ),
    _s(
        "no-such-command",
        """
        import click

        @click.group()
        def cli():
            pass

        @cli.command()
        def init():
            pass

        cli.main(["intit"], standalone_mode=False)
        """,
    ),
    _s(
        "missing-required-option",
        """
        import click

        @click.command()
        @click.option("--count", type=int, required=True)
        def run(count):
            pass

        run.main([], standalone_mode=False)
        """,
    ),
    _s(
        "missing-argument",
        """
        import click

        @click.command()
        @click.argument("src")
        @click.argument("dst")
        def copy(src, dst):
            pass

        copy.main(["a.txt"], standalone_mode=False)
        """,
    ),
    _s(
        "option-int-bad-value",
        """
        import click

        @click.command()
        @click.option("--count", type=int)
        def run(count):
            pass

        run.main(["--count", "three"], standalone_mode=False)
        """,
    ),
    _s(
        "option-requires-value",
        """
        import click

        @click.command()
        @click.option("--name")
        def hello(name):
            pass

        hello.main(["--name"], standalone_mode=False)
        """,
    ),
    _s(
        "got-unexpected-extra-argument",
        """
        import click

        @click.command()
        @click.argument("src")
        def show(src):
            pass

        show.main(["a.txt", "b.txt"], standalone_mode=False)
        """,
    ),
    _s(
        "choice-invalid",
        """
        import click
        click.Choice(["json", "yaml"]).convert("xml", None, None)
        """,
    ),
    _s(
        "int-range-out-of-range",
        """
        import click
        click.IntRange(0, 10).convert(11, None, None)
        """,
    ),
    _s(
        "bool-bad-value",
        """
        import click
        click.BOOL.convert("maybe", None, None)
        """,
    ),
    _s(
        "datetime-bad-value",
        """
        import click
        click.DateTime(["%Y-%m-%d"]).convert("31/12/2024", None, None)
        """,
    ),
    _s(
        "path-does-not-exist",
        """
        import click
        click.Path(exists=True).convert("missing.txt", None, None)
        """,
    ),
    _s(
        "file-missing",
        """
        import click
        click.File("r").convert("missing.txt", None, None)
        """,
    ),
    _s(
        "tuple-wrong-length",
        """
        import click
        click.Tuple([int, int]).convert((1,), None, None)
        """,
    ),
    _s(
        "no-current-context",
        """
        import click
        click.get_current_context()
        """,
    ),
    _s(
        "pass-decorator-missing-object",
        """
        import click
        pass_config = click.make_pass_decorator(dict)

        @click.command()
        @pass_config
        def show(config):
            click.echo(config)

        show.main([], standalone_mode=False)
        """,
    ),
    _s(
        "pass-context-without-parameter",
        """
        import click

        @click.command()
        @click.pass_context
        def show():
            pass

        show.main([], standalone_mode=False)
        """,
    ),
    _s(
        "command-decorated-twice",
        """
        import click

        @click.command()
        @click.command()
        def hello():
            pass
        """,
    ),
    _s(
        "option-callback-wrong-signature",
        """
        import click

        def validate(value):
            return value

        @click.command()
        @click.option("--port", type=int, callback=validate)
        def serve(port):
            pass

        serve.main(["--port", "80"], standalone_mode=False)
        """,
    ),
    _s(
        "style-unknown-color",
        """
        import click
        click.style("error", fg="orange")
        """,
    ),
    _s(
        "progressbar-without-length",
        """
        import click
        click.progressbar()
        """,
    ),
    _s(
        "prompt-eof",
        """
        import click
        click.prompt("Name")
        """,
    ),
    _s(
        "confirm-eof",
        """
        import click
        click.confirm("Continue?")
        """,
    ),
    _s(
        "open-file-missing-dir",
        """
        import click
        click.open_file("/nonexistent-dir/out.txt", "w")
        """,
    ),
    _s(
        "get-text-stream-unknown",
        """
        import click
        click.get_text_stream("stdlog")
        """,
    ),
    _s(
        "get-binary-stream-unknown",
        """
        import click
        click.get_binary_stream("stdlog")
        """,
    ),
    _s(
        "argument-two-names",
        """
        import click

        @click.command()
        @click.argument("src", "source")
        def show(src):
            pass
        """,
    ),
    _s(
        "option-no-name",
        """
        import click
        click.Option([])
        """,
    ),
    _s(
        "option-name-without-flag",
        """
        import click
        click.Option(["name"])
        """,
    ),
    _s(
        "option-nargs-minus-one",
        """
        import click

        @click.command()
        @click.option("--files", nargs=-1)
        def show(files):
            pass
        """,
    ),
    _s(
        "option-count-and-multiple",
        """
        import click
        click.Option(["-v", "--verbose"], count=True, multiple=True)
        """,
    ),
    _s(
        "option-multiple-default-not-list",
        """
        import click
        click.Option(["--tag"], multiple=True, default="latest")
        """,
    ),
    _s(
        "option-secondary-not-flag",
        """
        import click
        click.Option(["--color/--no-color"], is_flag=False)
        """,
    ),
    _s(
        "option-nargs-mismatch-tuple",
        """
        import click
        click.Option(["--point"], type=(int, int), nargs=3)
        """,
    ),
    _s(
        "option-prompt-hide-input-flag",
        """
        import click
        click.Option(["--force"], is_flag=True, prompt=True, hide_input=True)
        """,
    ),
    _s(
        "argument-nargs-default-not-list",
        """
        import click
        click.Argument(["files"], nargs=2, default="a.txt")
        """,
    ),
    _s(
        "group-add-command-no-name",
        """
        import click
        cli = click.Group("cli")
        cli.add_command(click.Command(None))
        """,
    ),
    _s(
        "chain-group-nested-group",
        """
        import click
        cli = click.Group("cli", chain=True)
        cli.add_command(click.Group("db"))
        """,
    ),
    _s(
        "chain-group-optional-argument",
        """
        import click
        click.Group("cli", chain=True, params=[click.Argument(["names"], nargs=-1)])
        """,
    ),
    _s(
        "version-option-unknown-package",
        """
        import click

        @click.command()
        @click.version_option()
        def cli():
            pass

        cli.main(["--version"], standalone_mode=False)
        """,
    ),
    _s(
        "main-args-not-iterable",
        """
        import click

        @click.command()
        def cli():
            pass

        cli.main(5, standalone_mode=False)
        """,
    ),
    _s(
        "invoke-unexpected-keyword",
        """
        import click

        @click.command()
        @click.option("--name")
        def hello(name):
            pass

        @click.command()
        @click.pass_context
        def main(ctx):
            ctx.invoke(hello, name="x", greeting="hi")

        main.main([], standalone_mode=False)
        """,
    ),
    _s(
        "forward-to-function",
        """
        import click

        def helper(name=None):
            return name

        @click.command()
        @click.option("--name")
        @click.pass_context
        def main(ctx, name):
            ctx.forward(helper)

        main.main(["--name", "x"], standalone_mode=False)
        """,
    ),
    _s(
        "runner-input-wrong-type",
        """
        from click.testing import CliRunner
        runner = CliRunner()
        with runner.isolation(input=42):
            pass
        """,
    ),
    _s(
        "choice-option-default-invalid",
        """
        import click

        @click.command()
        @click.option("--fmt", type=click.Choice(["json", "yaml"]), default="xml")
        def dump(fmt):
            pass

        dump.main([], standalone_mode=False)
        """,
    ),
)
