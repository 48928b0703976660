"""One alert per break on main, pure, on the recorded histories: every confirmed change and
break at one commit range of one machine is a section of one alert keyed by the range (spelled
out here, never made by the code under test); its state is regressed while any section stands
and recovered only when every one is back; its owner is the repository every section points
at, else the branch's own repository when configured, else the configured order (a side's
sections are its own only when its build changed between the two commits: without provenance
records, the rule before them; who else is told: tests/history/test_history_owners.py); an
issue's key of either form (with ``|<guard>``: filed before alerts) is read back."""

from __future__ import annotations

import functools
import re
from dataclasses import replace

import pytest
from history_data import BROKEN, NVFUSER_2, STOCK, THUNDER_2, real, shipped

from bot.history.alerts import alerts_of, broken_part, combined, timing_part
from bot.history.issues import watch_issues
from bot.history.stranded import guards_of, parse_key
from bot.history.watch import Watch, analyse

FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"
REPOS = (FUSER, THUNDER)
STEP_KEY = "rmsnorm-bwd|nvidia-h200|016e16b1cc86..63e9dde7503b"


@functools.cache
def watch(*commits: str) -> Watch:
    s, model = shipped()
    return analyse(real(commits), s, model)


def without_records(w: Watch) -> Watch:
    """``w`` with no provenance record on any run (as older results files have none): what
    changed between two commits is unknown, and each section's owner is the rule before
    records (nvFuser's for its fusion, Thunder's for its broken points)."""
    commits = tuple(
        replace(c, runs=tuple(replace(r, provenance=None) for r in c.runs))
        for c in w.history.commits
    )
    return replace(w, history=replace(w.history, commits=commits, every=()))


def with_break_at_the_step(w: Watch) -> Watch:
    """``w`` (six stock commits, then a slower state) with Thunder 0.2.5's real break (its 18
    points and their errors, from the recorded history of that break) at the same split."""
    (b,) = watch(*STOCK[:6], *BROKEN).breaks
    commits = w.history.commits
    moved = replace(b, split=5, last_good=commits[5].sha, first_bad=commits[6].sha)
    return replace(w, breaks=(moved,))


def test_the_step_is_one_alert_keyed_by_its_range() -> None:
    (ai,) = watch_issues([watch(*STOCK[:6], *THUNDER_2)], FUSER, REPOS, "perf-regression-bot")
    a = ai.alert
    assert (a.key, ai.spec.key, a.state) == (STEP_KEY, STEP_KEY, "regressed")
    assert [p.guard for p in a.parts] == ["ratio", "thunder"]
    assert a.repos == (THUNDER,) and a.owner_why == "what moved points at Thunder"
    assert [(t.repo, t.told) for t in a.told] == [(FUSER, False)]  # nvFuser's build is the same
    assert [name for name, _ in ai.spec.sizes] == ["nvidia-h200/ratio", "nvidia-h200/thunder"]
    assert all(1.02 < size < 1.03 for _, size in ai.spec.sizes)


def test_the_issue_tables_give_each_sides_share_of_peak_bandwidth() -> None:
    """Each row's "% of peak bandwidth" is the before and after windows' (issue 21: it read
    n/a → n/a on every row); the figures are the recorded runs' own."""
    (ai,) = watch_issues([watch(*STOCK[:6], *THUNDER_2)], FUSER, REPOS, "perf-regression-bot")
    rows = [line for line in ai.spec.body.splitlines() if line.startswith("| ") and "%" in line]
    cells = [re.findall(r"\| (\d+%) → (\d+%) \|", line) for line in rows]
    assert rows and "n/a" not in "".join(rows)
    assert sum(bool(c) for c in cells) >= 5
    for (before, after), *_ in filter(None, cells):
        assert 1 <= int(before[:-1]) <= 100 and 1 <= int(after[:-1]) <= 100


def test_a_break_and_a_timing_change_at_the_same_range_are_one_alert() -> None:
    w = with_break_at_the_step(watch(*STOCK[:6], *THUNDER_2))
    (ai,) = watch_issues([w], None, REPOS, "perf-regression-bot")
    a = ai.alert
    assert a.key == STEP_KEY and [p.guard for p in a.parts] == ["broken", "ratio", "thunder"]
    assert dict(ai.spec.sizes)["nvidia-h200/broken"] == 18
    body = ai.spec.body
    assert body.count("\n#### ") == 3 and "#### Every point still runs (broken)" in body
    assert body.index("(broken)") < body.index("kernel-time ratio (regressed)")
    assert "not a valid Executor" in body and "not a valid Executor" not in str(ai.spec.linked_body)
    assert ai.spec.title.startswith("RMSNorm backward: points that ran stopped running on ")
    assert "(18 point(s), ratio +2.7%, Thunder's kernels +2.8%)" in ai.spec.title
    assert "Every point still runs: they still fail at the newest commit" in ai.note


def test_a_break_and_nvfusers_slowdown_point_both_ways() -> None:
    """nvFuser's fusion slower (its repository) and Thunder's points broken (Thunder's) at one
    range: mixed, so the branch's repository when it is a configured one, else the order. The
    records would say that only the suite's hand-written definition changed there (its
    injected slowdown: nobody's upstream, test_history_owners.py), so they are taken away: the
    rule before records, and every configured repository told."""
    w = without_records(with_break_at_the_step(watch(*STOCK[:6], *NVFUSER_2)))
    (ai,) = watch_issues([w], THUNDER, REPOS, "perf-regression-bot")
    assert [p.guard for p in ai.alert.parts] == ["broken", "nvfuser"]
    assert (
        ai.alert.repos == (THUNDER, FUSER) and "the repository of this branch" in ai.alert.owner_why
    )
    (ai,) = watch_issues([w], "someone/else", REPOS, "perf-regression-bot")
    assert (
        ai.alert.repos == REPOS
        and ai.alert.owner_why == "the sections point at both sides or neither"
    )
    nvfuser_alone = without_records(watch(*STOCK[:6], *NVFUSER_2))
    (alone,) = watch_issues([nvfuser_alone], THUNDER, REPOS, "perf-regression-bot")
    assert alone.alert.repos == (FUSER, THUNDER)  # all of it points at nvFuser


@pytest.mark.parametrize(
    ("timing", "broken", "state"),
    [
        ("regressed", "recovered", "regressed"),
        ("recovered", "regressed", "regressed"),
        ("recovered", "hold", "hold"),
        ("hold", "recovered", "hold"),
        ("recovered", "recovered", "recovered"),
    ],
)
def test_the_alert_stands_while_any_section_does_and_closes_when_every_one_is_back(
    timing: str, broken: str, state: str
) -> None:
    w = with_break_at_the_step(watch(*STOCK[:6], *THUNDER_2))
    parts = [timing_part("nvidia-h200", replace(f, state=timing)) for f in w.follow]
    parts += [broken_part("nvidia-h200", replace(b, follow=broken)) for b in w.breaks]
    (a,) = alerts_of(w, parts, REPOS, None)
    assert a.state == state and len(a.parts) == 3
    assert combined([]) == "hold"


def test_both_key_forms_are_read_back() -> None:
    assert parse_key(STEP_KEY) == ("nvidia-h200", "016e16b1cc86", "63e9dde7503b", None)
    assert parse_key(f"{STEP_KEY}|thunder") == (
        "nvidia-h200",
        "016e16b1cc86",
        "63e9dde7503b",
        "thunder",
    )
    assert parse_key(f"{STEP_KEY}|speed") is None
    assert parse_key(f"rmsnorm-bwd|pr|{FUSER}#7") is None
    sizes = {"nvidia-h200/thunder": 1.03, "nvidia-h200/ratio": 1.02, "other/nvfuser": 1.1}
    assert guards_of(sizes, "nvidia-h200") == ("ratio", "thunder")
    assert guards_of(None, "nvidia-h200") == guards_of({}, "nvidia-h200")
    assert guards_of(None, "nvidia-h200") == ("broken", "ratio", "nvfuser", "thunder")
