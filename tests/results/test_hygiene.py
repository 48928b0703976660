"""The runner's hygiene sidecar: read strictly, absent means "not checked"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from machines_helpers import BASE, H200, REGRESSED, copy_machine, write_checks

from bot.results.hygiene import load_checks
from bot.results.locate import load_commit
from bot.results.types import BadInput


def test_no_sidecar_is_not_checked() -> None:
    assert load_commit(H200, BASE).checks is None


def test_checks_are_read_per_run(tmp_path: Path) -> None:
    mdir = copy_machine(H200, tmp_path / "results", "nvidia-h200")
    write_checks(mdir, REGRESSED, "GPU clocks throttled: HW slowdown")
    write_checks(mdir, BASE)
    head = load_commit(tmp_path / "results", REGRESSED).checks
    base = load_commit(tmp_path / "results", BASE).checks
    assert base is not None and base.ok and len(base.checks) == 2
    assert head is not None and not head.ok
    (failed,) = head.failed
    assert (failed.when, failed.problems) == ("after", ("GPU clocks throttled: HW slowdown",))


GOOD = {
    "schema": "perfbot-runner-check/1",
    "commit": BASE,
    "when": "before",
    "checked_at": "2026-12-01T10:00:00Z",
    "ok": True,
    "problems": [],
    "gpu": {},
}


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "empty runner check record"),
        ('{"schema": "perfbot-runner-check/1", "commit"', "truncated JSON"),
        (json.dumps({**GOOD, "schema": "perfbot-runner-check/2"}), "not a perfbot-runner-check/1"),
        (json.dumps([GOOD]), "not a perfbot-runner-check/1"),
        (json.dumps({**GOOD, "commit": REGRESSED}), f"check is for commit {REGRESSED}"),
        (json.dumps({**GOOD, "commit": "../x"}), "is not a full 40-hex commit hash"),
        (json.dumps({**GOOD, "when": "during"}), "'when' is 'during'"),
        (json.dumps({**GOOD, "ok": "yes"}), "'ok' is not true or false"),
        (json.dumps({**GOOD, "problems": "hot"}), "'problems' is not a list of texts"),
        (json.dumps({**GOOD, "checked_at": 5}), "'checked_at' is not a time"),
        (json.dumps({**GOOD, "gpu": []}), "'gpu' is not an object"),
        (json.dumps(GOOD) + "\nnot json", "line 2: corrupt JSON"),
    ],
)
def test_a_bad_sidecar_is_bad_input(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / f"{BASE}.hygiene.jsonl"
    path.write_text(text)
    with pytest.raises(BadInput, match=re.escape(said)):
        load_checks(path, BASE)


def test_a_bad_sidecar_fails_the_load(tmp_path: Path) -> None:
    mdir = copy_machine(H200, tmp_path / "results", "nvidia-h200")
    (mdir / f"{BASE}.hygiene.jsonl").write_text("{")
    with pytest.raises(BadInput, match=r"hygiene\.jsonl line 1: truncated JSON"):
        load_commit(tmp_path / "results", BASE)


def test_a_failed_check_without_text_still_says_it_failed(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({**GOOD, "ok": False}))
    checks = load_checks(path, BASE)
    assert checks is not None
    assert checks.failed[0].problems == ("check failed (no problem text recorded)",)
