"""The English-documented twins of the Chinese-documented packages (``bench/doc_translation.py``):
a translation may rewrite documentation only, line for line, and the shipped translation files
say nothing in Chinese."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from doc_translation import extract, read_translation, translate_file

BENCH = Path(__file__).resolve().parents[1] / "bench"

SOURCE = textwrap.dedent(
    '''
    """行情模块"""
    TIMEOUT = 10  # 超时秒数
    LABEL = "资金余额"


    def balance(account):
        """
        获取账户资金信息
        :param account: 账户
        """
        return account.read(LABEL)  # 读取余额
    '''
).lstrip("\n")


def test_extract_lists_docstrings_and_comments_not_the_programs_strings(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "quote.py").write_text(SOURCE, encoding="utf-8")
    lines = [line for _, line, _ in extract(tmp_path)]
    assert lines == [1, 2, 8, 9, 11]  # LABEL's literal (line 3) is the program's, not prose


def test_translation_rewrites_documentation_and_keeps_line_numbers() -> None:
    out = translate_file(
        SOURCE,
        {
            1: '"""Market quotes"""',
            2: "TIMEOUT = 10  # timeout in seconds",
            8: "    Get the account's funds",
            9: "    :param account: the account",
            11: "    return account.read(LABEL)  # read the balance",
        },
        "quote.py",
    )
    assert len(out.splitlines()) == len(SOURCE.splitlines())
    assert "Get the account's funds" in out and '"资金余额"' in out
    assert not re.search(r"[\u4e00-\u9fff]", out.replace("资金余额", ""))


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        ({3: 'LABEL = "balance"'}, "not a docstring or comment line"),
        ({2: "TIMEOUT = 20  # timeout in seconds"}, "the code before the comment changed"),
        ({8: '    """'}, "breaks the file"),
        ({8: "    Get the funds\n    and more"}, "number of lines"),
        ({40: "# nothing here"}, "no such line"),
    ],
)
def test_translation_that_touches_code_is_refused(lines: dict[int, str], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        translate_file(SOURCE, lines, "quote.py")


def test_shipped_translations_parse_and_hold_no_chinese() -> None:
    files = sorted((BENCH / "zh").glob("*.en-docs.txt"))
    assert files, "no translation shipped"
    for path in files:
        translation = read_translation(path)
        assert sum(len(lines) for lines in translation.values()) > 100
        for rel, lines in translation.items():
            assert rel.endswith(".py")
            for text in lines.values():
                # a commented line's code keeps the program's own strings (an error message)
                prose = re.sub(r"\"[^\"]*\"|'[^']*'", "", text) if " # " in text else text
                assert not re.search(r"[\u4e00-\u9fff]", prose), f"{rel}: {text}"


def test_a_malformed_translation_line_is_an_error(tmp_path: Path) -> None:
    bad = tmp_path / "x.en-docs.txt"
    bad.write_text("pkg/a.py:3:fine\npkg/a.py:three:not a line number\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"x.en-docs.txt:2"):
        read_translation(bad)
    twice = tmp_path / "y.en-docs.txt"
    twice.write_text("pkg/a.py:3:one\npkg/a.py:3:two\n", encoding="utf-8")
    with pytest.raises(ValueError, match="translated twice"):
        read_translation(twice)
