"""``report --format text``: the comment made plain (bot/tell/plain.py), on the comments the bot
really renders from recorded runs, on one example a rule, and on any string at all.

The real comments are read through the command line, whatever their layout is today: what is
checked holds for any markdown (no escapes, entities, comments or markers left; each table as
columns whose gaps line up by display width), so that a new template does not need new tests.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import DATA, run_bot

from bot.tell.plain import display_width, markdown_to_text

H200, STATES = DATA / "h200" / "results", DATA / "h200-states" / "results"
#: Real recorded pairs, one a verdict: regressed, no change, an nvFuser slowdown, broken.
PAIRS = {
    "regressed": (H200, "06f650c8", "9dc51696"),
    "no-change": (H200, "06f650c8", "da17d548"),
    "nvfuser-slower": (STATES, "6c840f30", "93486aaf"),
    "broken": (STATES, "6c840f30", "f888795e"),
}
_RULE = re.compile(r"-+(?:  -+)*")
_TABLE_DELIMITER = re.compile(r"\|? *:?-+:? *(?:\| *:?-+:? *)+\|?")


def _report(pair: str, fmt: str, *more: str) -> tuple[int, str]:
    results, base, head = PAIRS[pair]
    done = run_bot(
        "report", "--results", str(results), "--base", base, "--head", head, "--format", fmt, *more
    )
    return done.returncode, done.stdout


@pytest.fixture(scope="module", params=sorted(PAIRS))
def comment(request: pytest.FixtureRequest) -> tuple[str, str]:
    """One real comment, as markdown and as the text ``--format text`` printed for it."""
    code, md = _report(request.param, "markdown", "--full")
    text_code, text = _report(request.param, "text", "--full")
    assert code == text_code and code in (0, 1, 5)
    return md, text


def _slots(line: str) -> list[str]:
    """The line as terminal columns, counted here rather than by the code under test: a wide
    character (an emoji, CJK) takes two, the second one empty; a combining mark none."""
    out: list[str] = []
    for ch in line:
        if ch == "\ufe0f" and out and out[-1]:  # VS16: the emoji form, two columns (⚠️)
            out.append("")
        elif unicodedata.category(ch) not in ("Mn", "Me", "Cf"):
            out += [ch, ""] if unicodedata.east_asian_width(ch) in ("W", "F") else [ch]
    return out


def test_the_text_is_the_markdown_made_plain(comment: tuple[str, str]) -> None:
    md, text = comment
    assert text == markdown_to_text(md) + "\n"
    prose = "\n".join(line for line in text.splitlines() if not line.startswith("    "))
    assert not re.search(r"\\[!-/:-@\[-`{-~]", prose), "a backslash escape is left"
    assert not re.search(r"&(?:#[0-9]+|#x[0-9a-f]+|[a-z]+);", prose, re.IGNORECASE)
    for left in ("<!--", "-->", "<details", "</details>", "<summary", "\u200d", "\u200b"):
        assert left not in text, left
    assert "**" not in prose  # a reproducer's code keeps its own (x**2), indented
    for summary in re.findall(r"<summary>(.*?)</summary>", md):
        assert markdown_to_text(summary) in text.splitlines()


def test_every_table_is_columns_aligned_by_display_width(comment: tuple[str, str]) -> None:
    md, text = comment
    tables = sum(1 for line in md.splitlines() if _TABLE_DELIMITER.fullmatch(line.strip()))
    lines = text.splitlines()
    rules = [i for i, line in enumerate(lines) if _RULE.fullmatch(line) and i and lines[i - 1]]
    assert tables > 0 and len(rules) == tables
    for i in rules:
        starts = [m.start() for m in re.finditer(r"-+", lines[i])][1:]
        block = [lines[i - 1]]
        for line in lines[i + 1 :]:
            if not line.strip():
                break
            block.append(line)
        for row in block:
            slots = _slots(row)
            for start in starts:
                if len(slots) > start:  # the gap before each column is blank in every row
                    assert slots[start - 2 : start] == [" ", " "], (row, start)


@pytest.mark.parametrize(
    ("md", "text"),
    [
        (r"a \(b\) \+0.3% \[x\] \_y\_", "a (b) +0.3% [x] _y_"),
        (
            "An object of type &lt;class 'NoneType'&gt; &amp; &#64;",
            "An object of type <class 'NoneType'> & @",
        ),
        (
            "<!-- fusion-perfbot:key -->\nkept<!-- gone --> too\n<!-- a\nb -->after",
            "kept too\nafter",
        ),
        ("@\u200dwho #\u200d12 GH\u200d-3 x\u200by", "@who #12 GH-3 xy"),
        (
            "<details><summary>Kernel **times**</summary>\n\nbody\n\n</details>",
            "Kernel times\n\nbody",
        ),
        (
            "<details>\n<summary>On its own line</summary>\n\nbody\n</details>",
            "On its own line\n\nbody",
        ),
        (
            "**bold** and __strong__, _em_ and *em*, ~~struck~~",
            "bold and strong, em and em, struck",
        ),
        ("snake_case, 2 * 3 * 4, a_b_c, ~5 runs", "snake_case, 2 * 3 * 4, a_b_c, ~5 runs"),
        (
            "[docs](https://x.y/METHOD.md) and ![chart](c.png)",
            "docs (https://x.y/METHOD.md) and chart (c.png)",
        ),
        (
            "[https://x.y](https://x.y), <https://a.b/c>, [not a link]",
            "https://x.y, https://a.b/c, [not a link]",
        ),
        ("`python -m bot \\(x\\)` and ``a ` b``", "python -m bot \\(x\\) and a ` b"),
        ("### Heading ###\n# Top\nSetext\n======", "Heading\n\nTop\n\nSetext"),
        (
            "```mermaid\nxychart-beta\n  bar [1, 2]\n```\nafter",
            "    xychart-beta\n      bar [1, 2]\n\nafter",
        ),
        ("- a **b**\n  - c _d_\n1. e", "- a b\n  - c d\n1. e"),
        ("> quoted **b**\n> more", "> quoted b\n> more"),
        ("a<br>b <sub>small</sub>", "a\nb small"),
        ("trailing hard break\\\nnext", "trailing hard break\nnext"),
        ("text\n\n    code \\(1\\)\n    two", "text\n\n    code \\(1\\)\n    two"),
        ("| a\tb | c<br>d |\n|---|---|\n| 1 | 2 |", "a b  c d\n---  ---\n1    2"),
    ],
)
def test_each_rule(md: str, text: str) -> None:
    assert markdown_to_text(md) == text


def test_a_table_is_padded_by_display_width_with_its_header_and_a_rule() -> None:
    md = "| point | verdict | µs |\n|---|---|--:|\n| a\\|b | 🔴 regressed | 5.0 |\n"
    md += "| c | ⚪ no | 12.5 |"
    assert markdown_to_text(md).splitlines() == [
        "point  verdict         µs",
        "-----  ------------  ----",
        "a|b    🔴 regressed   5.0",
        "c      ⚪ no         12.5",
    ]


def test_display_width() -> None:
    assert [display_width(s) for s in ("abc", "🔴", "⚪", "µs", "e\u0301", "⚠\ufe0f", "中文")] == [
        3,
        2,
        2,
        2,
        1,
        2,
        4,
    ]


MARKUP = st.sampled_from(
    [
        *"\\`&<>*_~![]()|#-=:> \n\t.;xé🔴\u200d\u200b\ufe0f\r\x1b",
        *("&amp;", "&#27;", "&#x110000;", "<!--", "-->", "```", "~~~", "<br>", "<a href='x'>"),
        *("<details>", "<summary>", "</summary>", "</details>", "| --- |", "\n|---|---|\n"),
        *("](", "    ", "1. ", "- ", "\ud800"),
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(MARKUP, max_size=80).map("".join) | st.text(max_size=300))
def test_any_string_gives_text_and_never_raises(md: str) -> None:
    text = markdown_to_text(md)
    assert isinstance(text, str)
    assert not any(unicodedata.category(c) in ("Cf", "Cs") for c in text)
    assert not any(unicodedata.category(c) == "Cc" and c not in "\n\t" for c in text)


def test_long_hostile_lines_take_linear_time() -> None:
    """Unmatched openers by the ten thousand: each costs a constant, not a scan to the end."""
    for line in (
        "[" * 60_000,
        "`a``b" * 12_000,
        "*_" * 30_000,
        "<summary>" * 7_000,
        "[a](" * 15_000,
    ):
        assert isinstance(markdown_to_text(line), str)


def test_the_converter_is_generic_not_one_layout(tmp_path: Path) -> None:
    """Markdown the bot does not write today, as another template might."""
    md = (
        "## Summary\n\n| a | b |\n| :-: | --- |\n| 1 | 2 |\n\n***\n\n> | q | r |\n> |---|---|\n"
        "> | 3 | 4 |\n\n    indented code \\(kept\\)\n"
    )
    assert markdown_to_text(md).splitlines() == [
        "Summary",
        "",
        "a  b",
        "-  -",
        "1  2",
        "",
        "---",
        "",
        "> q  r",
        "> -  -",
        "> 3  4",
        "",
        "    indented code \\(kept\\)",
    ]
