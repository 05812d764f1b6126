"""A generated project with a real git history: commits that each change one described
function (mined as questions) among commits the miner must skip. Used by the history,
evaluation and hostile-repository tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

# Topics of the generated project: module -> (function, what it does); every function has its
# own vocabulary, so a commit message about it names its place in words, not identifiers.
TOPICS: dict[str, list[tuple[str, str]]] = {
    "upload": [
        ("send_chunk", "send one chunk of the archive to the storage bucket"),
        ("resume_transfer", "resume an interrupted transfer from the last acknowledged offset"),
        ("throttle", "slow down the sender when the bandwidth quota is exhausted"),
    ],
    "billing": [
        ("charge_card", "charge the customer's card for the monthly subscription"),
        ("refund", "give money back for a cancelled invoice"),
        ("apply_coupon", "reduce the price with a promotional voucher code"),
    ],
    "search": [
        ("tokenize", "split the sentence into lowercase words for the inverted index"),
        ("rank_documents", "order matching documents by term frequency"),
        ("highlight", "wrap matched words in emphasis markers for display"),
    ],
    "calendar": [
        ("next_meeting", "find the next meeting of the attendee after now"),
        ("detect_overlap", "report two appointments that happen at the same hour"),
        ("export_ical", "write the appointments as an iCalendar file"),
    ],
    "mailer": [
        ("compose_digest", "gather unread notifications into one weekly digest email"),
        ("bounce_handler", "disable addresses whose messages bounce repeatedly"),
        ("render_template", "fill the greeting template with the recipient's name"),
    ],
    "inventory": [
        ("reserve_stock", "hold items in the warehouse for a pending order"),
        ("restock_alert", "warn purchasing when shelves run low"),
        ("count_pallets", "count pallets stacked in each aisle"),
    ],
}

ENDINGS = (
    "also cope with an empty batch",
    "log a warning when the input is missing",
    "stop early on a negative amount",
    "keep going after a timeout",
)


def module_text(name: str, version: dict[str, int]) -> str:
    out = [f'"""The {name} part of the demo service."""\n']
    for func, what in TOPICS[name]:
        extra = "".join(f"    step_{i} = value + {i}\n" for i in range(version.get(func, 0)))
        out.append(
            f'\n\ndef {func}(value):\n    """{what.capitalize()}."""\n{extra}    return value\n'
        )
    return "".join(out)


class Repo:
    """A git repository built commit by commit, with increasing commit dates."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tick = 0
        root.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.email", "dev@example.com")
        self.git("config", "user.name", "Dev")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str, env: dict[str, str] | None = None) -> str:
        return subprocess.run(
            ["git", "-C", str(self.root), *args],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, **(env or {})},
        ).stdout.strip()

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def commit(self, message: str, author: str = "Dev <dev@example.com>") -> str:
        self.tick += 1
        stamp = f"@{1704067200 + self.tick * 3600} +0000"  # an hour apart from 2024-01-01
        when = {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        self.git("add", "-A")
        self.git("commit", "-q", "--author", author, "-m", message, env=when)
        return self.git("rev-parse", "HEAD")


def build_history(root: Path) -> dict[str, Any]:
    """24 real questions (each changes one described function; every third also changes its
    neighbour in the next module) among commits that must all be skipped."""
    repo = Repo(root)
    versions: dict[str, dict[str, int]] = {m: {} for m in TOPICS}

    def save(*modules: str) -> None:
        for m in modules:
            repo.write(f"src/service/{m}.py", module_text(m, versions[m]))

    save(*TOPICS)
    repo.write("tests/test_upload.py", "def test_send_chunk():\n    assert True\n")
    repo.write("docs/index.md", "# Service\n")
    # Switch the slow stages off: these tests are about mining and replay, not the models.
    repo.write(".code-evidence.toml", '[stages]\nvectors = false\n[ranking]\nreranker = "none"\n')
    repo.commit("Initial import of the service")
    questions: dict[str, tuple[str, ...]] = {}
    modules = list(TOPICS)
    n = 0
    for round_ in range(4):
        for mi, m in enumerate(modules):
            func, what = TOPICS[m][round_ % 3]
            versions[m][func] = versions[m].get(func, 0) + 1
            touched = [m]
            if n % 3 == 0:  # a change that needs the neighbour too: variant b
                other = modules[(mi + 1) % len(modules)]
                ofunc = TOPICS[other][0][0]
                versions[other][ofunc] = versions[other].get(ofunc, 0) + 1
                touched.append(other)
            save(*touched)
            sha = repo.commit(f"When asked to {what}, {ENDINGS[round_]} (#{100 + n})")
            questions[sha] = tuple(f"src/service/{t}.py" for t in touched)
            n += 1
            if n == 3:  # the noise, in the middle of the history
                versions["search"]["tokenize"] = versions["search"].get("tokenize", 0) + 1
                save("search")
                repo.commit("Bump requests from 2.0 to 2.1", "dependabot[bot] <bot@github.com>")
                versions["billing"]["refund"] = versions["billing"].get("refund", 0) + 1
                save("billing")
                repo.commit("Bump version to 1.2.0")
                repo.write("docs/index.md", "# Service\n\nMore words about the service.\n")
                repo.commit("Describe the service in the documentation index")
                text = (repo.root / "src/service/mailer.py").read_text(encoding="utf-8")
                repo.write("src/service/mailer.py", text.replace("Gather unread", "Collect unread"))
                repo.commit("Reword the description of what the weekly digest gathers")
                repo.write("src/service/extra.py", "def brand_new():\n    return 1\n")
                repo.commit("Add a brand new helper module for later work")
                versions["upload"]["throttle"] = versions["upload"].get("throttle", 0) + 1
                save("upload")
                repo.commit("Fix typo in the throttle code path comment")
    return {"repo": repo, "questions": questions}
