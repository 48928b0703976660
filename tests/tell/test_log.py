"""Nothing the bot prints can start a workflow command in a GitHub Actions log."""

from __future__ import annotations

import io
import re
import shutil
import unicodedata
from pathlib import Path

import pytest
from data_helpers import SyntheticResults, damaged_copy, synthetic
from hypothesis import given
from hypothesis import strategies as st

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.tell.log import LogSafeWriter, safe_line, safe_text

__all__ = ["synthetic"]
#: What the runner splits a job's output on (StreamReader.ReadLine: \r, \n, \r\n).
RUNNER_LINES = re.compile(r"\r\n|\r|\n")
#: Characters that tend to slip past a culture-sensitive comparison, and the forms themselves.
TRICKY = st.sampled_from(
    [
        ":",
        "::",
        "#",
        "##[",
        "[",
        " ",
        "\t",
        "\r",
        "\n",
        "\u200b",
        "\u200d",
        "\ufeff",
        "\u00ad",
        "\u0301",
        "\u20dd",
        "\u2028",
        "\u00a0",
        "\x1b",
        "error",
        "add-mask",
        "a",
    ]
)


#: What the runner's culture-sensitive comparison skips, written here apart from the code under
#: test (bot/tell/log.py's IGNORABLE): format characters (zero-width space and joiners, bidi
#: marks, soft hyphen), nonspacing and enclosing combining marks.
RUNNER_IGNORES = ("Cf", "Mn", "Me")


def runner_sees(line: str) -> str:
    return "".join(c for c in line if c.isascii() or unicodedata.category(c) not in RUNNER_IGNORES)


def runner_would_act_on(output: str) -> list[str]:
    """The lines of `output` the runner would take as commands (its two rules, read at the
    source), with ignorable characters dropped as its culture-sensitive comparison does."""
    found = []
    for line in RUNNER_LINES.split(output):
        seen = runner_sees(line)
        if seen.lstrip().startswith("::") or "##[" in seen:
            found.append(line)
    return found


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("::error::x", "\\::error::x"),
        ("  ::warning file=a::y", "\\  ::warning file=a::y"),
        ("\u200b::add-mask::z", "\\\u200b::add-mask::z"),
        (":\u200b:stop-commands::t", "\\:\u200b:stop-commands::t"),
        ("results ##[error]b", "results ##\\[error]b"),
        ("#\u200b#[set-output name=x]y", "#\u200b#\\[set-output name=x]y"),
        ("\u0301::error::combining acute", "\\\u0301::error::combining acute"),
        ("\u20dd::add-mask::enclosing circle", "\\\u20dd::add-mask::enclosing circle"),
        ("#\u0301#[error]c", "#\u0301#\\[error]c"),
        ("\r::error::r", "\\x0d::error::r"),
        ("ansi \x1b[31mred", "ansi \\x1b[31mred"),
        ("a::b stays", "a::b stays"),
        ("| table | row |", "| table | row |"),
    ],
)
def test_each_form_is_made_inert_and_plain_text_is_left_alone(raw: str, shown: str) -> None:
    assert safe_line(raw) == shown
    assert runner_would_act_on(safe_line(raw)) == []


@given(st.lists(TRICKY, max_size=40).map("".join))
def test_no_text_survives_as_a_command(text: str) -> None:
    assert runner_would_act_on(safe_text(text)) == []


@given(st.lists(TRICKY, max_size=30).map("".join), st.integers(0, 30))
def test_the_writer_sees_a_command_split_over_two_writes(text: str, cut: int) -> None:
    sink = io.StringIO()
    writer = LogSafeWriter(sink)
    writer.write(text[:cut])
    writer.write(text[cut:] + "\n")
    writer.flush()
    assert sink.getvalue() == safe_text(text) + "\n"
    assert runner_would_act_on(sink.getvalue()) == []


def test_a_results_file_name_with_a_newline_cannot_start_a_command(
    synthetic: SyntheticResults, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reported case: a file name carrying "\\n::error ..." printed in a bad-input message."""
    synth = damaged_copy(synthetic, tmp_path)
    good = synth.result_file("same")
    prefix = synth.prefix("same")
    hostile = good.with_name(f"{prefix}-x\n::error title=pwned::the bot was fooled.json")
    shutil.move(good, hostile)
    hostile.write_text('{"version": 2, "commit_hash": ')  # truncated: its name is printed
    argv = ["report", "--results", str(synth.results_dir), "--base", synth.commits["base"]]
    assert cli.main([*argv, "--head", prefix], env={}) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "truncated JSON" in err and "-x\\n::error title=pwned::the bot was fooled.json" in err
    assert runner_would_act_on(err) == []
    assert err.count("\n") == 1  # one failure, one line: the name's line break is escaped
