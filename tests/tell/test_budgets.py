"""The comment and the issues read in five seconds (issue 23): their lengths on the recorded H200
pairs, as posted to the local GitHub fake by the demo flow (the PR open, then merged), held
under the budgets the issue set: a no-change comment at most 3,000 characters with its folded
parts, a regression's at most 8,000, an issue at most 8,000 with its reproducer.

The same four pairs are photographed by tests/tell/screens.py; their first screen is checked
in a browser by tests/tell/test_first_screen.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tell.screens import PAIRS, run_demo

NO_CHANGE_CHARS = 3_000
COMMENT_CHARS = 8_000
ISSUE_CHARS = 8_000


@pytest.fixture(scope="module")
def posted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    out = tmp_path_factory.mktemp("posted")
    index = {}
    for name in PAIRS:
        run_demo(name, out / name)
        index[name] = json.loads((out / name / "posted.json").read_text(encoding="utf-8"))
        index[name]["folder"] = str(out / name)
    return index


def _comment(posted: dict[str, dict[str, object]], name: str) -> int:
    (comment,) = posted[name]["comments"]  # type: ignore[misc]
    return int(comment["chars"])


@pytest.mark.parametrize("name", ["nochange", "catalog-nochange"])
def test_a_no_change_comment_is_short(posted: dict[str, dict[str, object]], name: str) -> None:
    """One fusion or the whole catalog (14 fusions, two A/A runs): one screen says "fine"."""
    assert posted[name]["exit_code"] == 0 and not posted[name]["issues"]
    assert _comment(posted, name) <= NO_CHANGE_CHARS


def test_a_drifted_run_says_so_briefly(posted: dict[str, dict[str, object]]) -> None:
    """The in-run control moved (data/h200-drift): not judged, nothing filed, short."""
    assert posted["drift"]["exit_code"] == 0 and not posted["drift"]["issues"]
    assert _comment(posted, "drift") <= COMMENT_CHARS


#: One alert, and where its issues go: Thunder's changes to Thunder alone (nvFuser's build is
#: the same at both sides), the suite's own hand-written definition to nobody upstream.
@pytest.mark.parametrize(
    ("name", "filed"), [("demo", 1), ("rmsnorm", 1), ("nvfuser", 0), ("broken", 1)]
)
def test_a_regression_comment_and_its_issues_fit(
    posted: dict[str, dict[str, object]], name: str, filed: int
) -> None:
    assert posted[name]["exit_code"] in (1, 5)
    assert _comment(posted, name) <= COMMENT_CHARS
    issues = posted[name]["issues"]
    assert len(issues) == filed  # type: ignore[arg-type]
    for issue in issues:  # type: ignore[attr-defined]
        assert issue["chars"] <= ISSUE_CHARS, issue["ref"]


def test_the_primary_issue_carries_the_reproducer(posted: dict[str, dict[str, object]]) -> None:
    """The RMSNorm pair has both sides' captures: its primary issue posts the bot's own script."""
    primary = max(posted["rmsnorm"]["issues"], key=lambda i: i["chars"])  # type: ignore[arg-type]
    assert primary["state"] == "open"
    body = (Path(str(posted["rmsnorm"]["folder"])) / primary["file"]).read_text(encoding="utf-8")
    assert "**Reproducer** for thunder-prims bfloat16 16384x8192" in body
    assert "```python" in body and "How this is decided" in body


def test_the_bot_doc_quotes_these_lengths(posted: dict[str, dict[str, object]]) -> None:
    """docs/BOT.md's figures are what the demo posts now, not what it posted once."""
    bot_doc = Path(__file__).resolve().parents[2] / "docs" / "BOT.md"
    text = " ".join(bot_doc.read_text(encoding="utf-8").split())
    issues = [int(i["chars"]) for n in PAIRS for i in posted[n]["issues"]]  # type: ignore[attr-defined]
    assert (
        f"the demo's regression comment is {_comment(posted, 'demo'):,} characters, a no-change "
        f"one {_comment(posted, 'nochange'):,}, an issue at most {max(issues):,} with its "
        "reproducer" in text
    )
