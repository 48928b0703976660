"""The watch's changes on the landing view (bot/site/watch.py): what `history --json` says on
real recorded histories, listed with links to their commits and their alert's issue; an
nvFuser slowdown's ratio never reads as a gain; the file is untrusted input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paths import REPO_ROOT

from bot.history.issues import alert_json, watch_issues
from bot.history.render import to_json
from bot.history.watch import analyse
from bot.results.types import BadInput
from bot.site import build_site
from bot.site.watch import changes_block, read_rows
from tests.history.history_data import NVFUSER_2, STOCK, THUNDER_2, real, shipped

REPOS = ("NVIDIA/Fuser", "Lightning-AI/lightning-thunder")


def history_json(tmp_path: Path, order: list[str]) -> Path:
    """What `python -m bot history --json` writes for these recorded commits (dry: no issue
    touched, the alerts as the filer would file them)."""
    s, model = shipped()
    w = analyse(real(order), s, model)
    issues = watch_issues([w], None, REPOS, "perf-regression-bot")
    path = tmp_path / "history.json"
    data = {**to_json([w]), "alerts": [alert_json(ai) for ai in issues]}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_thunder_step_is_listed_with_its_commits_and_its_issue(tmp_path: Path) -> None:
    rows = read_rows(history_json(tmp_path, [*STOCK[:6], *THUNDER_2]))
    assert [(r.guard, r.what, r.status) for r in rows] == [
        ("Thunder's own kernel time", "slower", "confirmed"),
        ("Thunder/nvFuser kernel-time ratio", "slower", "confirmed"),
    ]
    html = changes_block(rows)
    assert f'href="index.html#commits?commit={rows[0].first_bad}"' in html
    assert "https://github.com/Lightning-AI/lightning-thunder/issues?q=" in html
    assert f"since%20{rows[0].first_bad[:12]}" in html
    assert "+2.8% [+2.1%, +3.6%]" in html


def test_an_nvfuser_slowdown_is_never_thunders_gain(tmp_path: Path) -> None:
    rows = read_rows(history_json(tmp_path, [*STOCK[:8], *NVFUSER_2]))
    what = {r.guard: r.what for r in rows}
    assert what["nvFuser's hand-written fusion"] == "slower"
    assert what["Thunder/nvFuser kernel-time ratio"].endswith("not a gain")
    assert "faster" not in changes_block(rows)


def test_no_change_says_so(tmp_path: Path) -> None:
    rows = read_rows(history_json(tmp_path, list(STOCK[:8])))
    assert rows == [] and "None: no guard moved" in changes_block(rows)


@pytest.mark.parametrize(
    "content",
    ["{not json", json.dumps({"schema": "other/1"}), json.dumps({"schema": "perfbot-history/1",
     "machines": [{"machine": "m", "changes": [{"guard": 1}]}]})],
    ids=["not json", "another schema", "a field of another type"],
)  # fmt: skip
def test_a_malformed_file_is_bad_input(tmp_path: Path, content: str) -> None:
    path = tmp_path / "history.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BadInput):
        read_rows(path)


def test_what_came_from_the_file_is_escaped(tmp_path: Path) -> None:
    change = {"guard": "<b>g</b>", "direction": "x", "status": "pending",
              "last_good": "a" * 40, "first_bad": "\"><script>", "size": None}  # fmt: skip
    data = {
        "schema": "perfbot-history/1",
        "machines": [{"machine": "<i>m</i>", "changes": [change]}],
    }
    path = tmp_path / "history.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    html = changes_block(read_rows(path))
    assert "<script>" not in html and "<i>m</i>" not in html and "&lt;b&gt;g&lt;/b&gt;" in html


def test_the_built_site_leads_with_the_watchs_changes(tmp_path: Path) -> None:
    path = history_json(tmp_path, [*STOCK[:6], *THUNDER_2])
    results = [
        REPO_ROOT / "data" / "h200" / "results",
        REPO_ROOT / "data" / "h200-states" / "results",
    ]
    build_site(results, tmp_path / "site", history_json=path)
    page = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert page.index('id="perfbot-watch"') < page.index('class="machine"')
    assert page.count("<tr><td>nvidia-h200</td>") == 2
