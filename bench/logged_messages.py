#!/usr/bin/env python3
"""The packages' messages as a service's log shows them: each logged by its language's common
logger, run here.

A service does not crash on an error: it logs it and goes on, and what a developer pastes is
the log line. This set takes ``thrown_messages.py``'s messages (its ``--bare`` cases: the
literal of a ``throw``/``raise``/``panic`` site of a held-out package, placeholders filled) and
has a real logger of the package's language write each one, as an application that caught it
would (``log.WithError(err).Error(…)``, ``logger.error(err)``):

- Go, logrus 1.9 (Debian's ``golang-github-sirupsen-logrus-dev``, GOPATH mode): ``logrus
  text``, its logfmt line with the error under ``error=`` and the application's own message
  ``request failed`` under ``msg=``, as ``WithError(err).Error("request failed")`` writes it to
  a file; ``logrus json``, ``logrus.Error(err)`` with its JSON formatter;
- JavaScript and TypeScript, pino 9 (npm): ``logger.error(err)``, one JSON line with the error
  serialised (its ``message`` and ``stack``, the stack of the logging script);
- PHP, Monolog (Debian's ``php-monolog``): ``$log->error($message)``, its line formatter;
- Ruby, the standard library's ``Logger``: ``logger.error(message)``;
- Java, ``java.util.logging``: ``severe(message)``, its two-line simple format.

Rust and C# have no logger here and are left out. Gold: the message's sites, as in
``thrown_messages.py``. Reported per language and logger: MRR@10 at file level, site@1 /
site@10 and the two refusal numbers; ``depth`` deep, no time limit.

  python bench/logged_messages.py --packages DIR [--index-root DIR] [--work DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from common import CACHE_ROOT, log
from doc_questions import ALL_PACKAGES
from held_out import place_table, write_report
from thrown_messages import ask, build_cases

GOPATH = Path("/usr/share/gocode")
PINO = "pino@9.5.0"
GO_LOGGER = """package main

import (
	"errors"
	"os"

	"github.com/sirupsen/logrus"
)

func main() {
	logrus.SetOutput(os.Stdout)
	err := errors.New(os.Args[2])
	if os.Args[1] == "json" {
		logrus.SetFormatter(&logrus.JSONFormatter{})
		logrus.Error(err)
		return
	}
	logrus.WithError(err).Error("request failed")
}
"""
NODE_LOGGER = "const logger = require('pino')();\nlogger.error(new Error(process.argv[2]));\n"
PHP_LOGGER = """<?php
require '/usr/share/php/Psr/Log/autoload.php';
require '/usr/share/php/Monolog/autoload.php';
$log = new Monolog\\Logger('app');
$log->pushHandler(new Monolog\\Handler\\StreamHandler('php://stdout'));
$log->error($argv[1]);
"""
RUBY_LOGGER = "require 'logger'\nLogger.new($stdout).error(ARGV[0])\n"
JAVA_LOGGER = """import java.util.logging.Logger;

public class Main {
  public static void main(String[] args) {
    Logger.getLogger("app").severe(args[0]);
  }
}
"""
# The loggers of each language: (name, how a message is logged: a command to which the
# message is appended as its last argument).
LANGUAGE_LOGGERS = {
    "Go": ("logrus text", "logrus json"),
    "JS/TS": ("pino",),
    "PHP": ("monolog",),
    "Ruby": ("Logger",),
    "Java": ("java.util.logging",),
}


@dataclass
class Case:
    project: str
    language: str
    logger: str
    query: str
    gold: dict[str, list[list[int]]] = field(default_factory=dict)


@dataclass
class Loggers:
    """The loggers, built or installed once under ``work``."""

    work: Path

    def command(self, logger: str) -> list[str]:
        if logger.startswith("logrus"):
            return [str(self._go()), logger.split()[1]]
        if logger == "pino":
            return ["node", str(self._write("pino/log.js", NODE_LOGGER, self._pino))]
        if logger == "monolog":
            return ["php", str(self._write("log.php", PHP_LOGGER))]
        if logger == "Logger":
            return ["ruby", str(self._write("log.rb", RUBY_LOGGER))]
        folder = self._write("java/Main.java", JAVA_LOGGER).parent
        if not (folder / "Main.class").exists():
            subprocess.run(["javac", "Main.java"], cwd=folder, check=True, capture_output=True)
        return ["java", "-cp", str(folder), "Main"]

    def _write(self, rel: str, text: str, before=None) -> Path:
        path = self.work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if before is not None:
            before(path.parent)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        return path

    def _pino(self, folder: Path) -> None:
        if not (folder / "node_modules" / "pino").is_dir():
            install = ["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix"]
            subprocess.run([*install, str(folder), PINO], check=True, capture_output=True)

    def _go(self) -> Path:
        source = self._write("go/main.go", GO_LOGGER)
        binary = source.parent / "logger"
        if not binary.exists() or binary.stat().st_mtime < source.stat().st_mtime:
            env = {"GO111MODULE": "off", "GOPATH": str(GOPATH), "GOCACHE": str(self.work / "gc")}
            subprocess.run(
                ["go", "build", "-o", str(binary), "main.go"],
                cwd=source.parent,
                check=True,
                capture_output=True,
                env={**os.environ, **env},
            )
        return binary


def logged(loggers: Loggers, logger: str, message: str) -> str:
    """What ``logger`` wrote for ``message`` (stdout, else stderr: ``java.util.logging``)."""
    run = subprocess.run(
        [*loggers.command(logger), message], capture_output=True, text=True, timeout=60
    )
    return (run.stdout or run.stderr).strip()


def build(packages: Path, work: Path, per_package: int, seed: int) -> list[Case]:
    loggers = Loggers(work)
    cases: list[Case] = []
    for project in ALL_PACKAGES:
        rng = random.Random(f"{seed}:{project}")
        for thrown in build_cases(packages / project, project, per_package, rng, bare=True):
            for logger in LANGUAGE_LOGGERS.get(thrown.language, ()):
                text = logged(loggers, logger, thrown.query)
                if not text:
                    log(f"left out, {logger} wrote nothing: {project} {thrown.query[:60]!r}")
                    continue
                cases.append(Case(project, thrown.language, logger, text, dict(thrown.gold)))
        log(f"{project}: {sum(c.project == project for c in cases)} cases")
    return cases


def table(rows: list[dict]) -> str:
    groups = [
        (
            f"{lang} | {logger}",
            lambda r, lang=lang, logger=logger: r["language"] == lang and r["logger"] == logger,
        )
        for lang, names in LANGUAGE_LOGGERS.items()
        for logger in names
    ]
    groups.append(("all | all", lambda r: True))
    return place_table(rows, groups, "language | logger", "site")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--packages", type=Path, required=True, help="the packages, unpacked")
    ap.add_argument("--index-root", type=Path, default=CACHE_ROOT / "thrown-idx")
    ap.add_argument("--work", type=Path, default=CACHE_ROOT / "loggers", help="the loggers")
    ap.add_argument("--per-package", type=int, default=15)
    ap.add_argument("--seed", type=int, default=40)
    ap.add_argument("--list", action="store_true", help="print the cases, ask nothing")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    cases = build(args.packages, args.work, args.per_package, args.seed)
    if args.list:
        for c in cases:
            print(f"{c.project}\t{c.logger}\t{c.query.splitlines()[0][:140]}")
        return
    rows = ask(args.packages, args.index_root, cases)  # a message's sites, as thrown_messages
    print(table(rows))
    write_report(rows, "logged-messages", args.out)


if __name__ == "__main__":
    main()
