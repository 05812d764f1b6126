"""The README documents the configuration and the JSON answer; these fail when code moves on."""

from __future__ import annotations

import dataclasses
import re

from code_evidence.api import Evidence, FindResult
from code_evidence.config import Config
from support import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_configuration_key_is_documented_and_real() -> None:
    real = {
        f"[{section.name}] {key.name}"
        for section in dataclasses.fields(Config)
        for key in dataclasses.fields(getattr(Config(), section.name))
    }
    documented = set(re.findall(r"^\| `(\[\w+\] \w+)` \|", README, re.M))
    assert documented == real


def test_json_example_lists_every_answer_field() -> None:
    block = README.split("## JSON answer", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    top = set(re.findall(r'^  "(\w+)":', block, re.M)) | set(re.findall(r', "(\w+)":', block))
    fields = {f.name for f in dataclasses.fields(FindResult)}
    assert fields <= top | {"commit", "branch"}
    evidence = {f.name for f in dataclasses.fields(Evidence)}
    assert all(f'"{name}"' in block for name in evidence)
