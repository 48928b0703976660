"""Points no guard can see are said (issue 41, real data): a variant that fails at every
commit (no break: it never ran; no timing: it has none), and points that fail from the oldest
commit until one where they first run (where a history of nightlies opens for them)."""

from __future__ import annotations

from history_data import BROKEN, real, shipped
from paths import DATA, REPO_ROOT

from bot.history.load import load_histories
from bot.history.watch import analyse

OPENS = (
    "thunder-func and thunder-prims (every point) failed from the oldest commit on and first "
    "ran at 977510d7: the history opens for them there"
)


def test_thunder_0_2_5_s_points_never_ran() -> None:
    s, model = shipped()
    w = analyse(real(BROKEN), s, model)  # Thunder 0.2.5, twice: no nvFuser executor
    assert (
        "thunder-func and thunder-prims (every point) failed at every commit that measured "
        "them: no guard sees them"
    ) in w.notes
    assert w.breaks == ()


def test_the_history_opens_at_the_first_build_that_runs() -> None:
    s, model = shipped()
    folders = [DATA / "h200-under-test" / "thunder-broken-pair" / "results",
               DATA / "h200-thunder-nightlies" / "results"]  # fmt: skip
    (h,) = load_histories(folders)
    w = analyse(h, s, model)
    assert OPENS in w.notes and w.breaks == ()
    said = " ".join((REPO_ROOT / "docs" / "HISTORY.md").read_text(encoding="utf-8").split())
    assert f'notes: "{OPENS}"' in said
    assert not any("every commit" in n for n in w.notes)


def test_a_history_where_everything_ran_says_nothing_of_it() -> None:
    s, model = shipped()
    (h,) = load_histories([DATA / "h200-thunder-nightlies" / "results"])
    assert not any("(every point)" in n for n in analyse(h, s, model).notes)


def test_some_points_of_a_variant_are_counted() -> None:
    """One point failing from the start among a variant's nine says how many (a real run of
    the broken build beside the nightlies, one point kept of it)."""
    from dataclasses import replace

    from bot.history.broken import never_ran_notes, statuses

    broken = real(BROKEN).commits[0]
    (h,) = load_histories([DATA / "h200-thunder-nightlies" / "results"])
    keys = sorted(k for k in h.commits[0].runs[0].points if k.variant == "thunder-func")
    failing = {k: p for k, p in broken.runs[0].points.items() if k == keys[0]}
    ok = {k: p for k, p in h.commits[0].runs[0].points.items() if k != keys[0]}
    first = replace(broken, runs=(replace(broken.runs[0], points={**ok, **failing}),))
    commits = (first, *h.commits[1:])
    (said,) = never_ran_notes(commits, {k: statuses(commits, k) for k in keys})
    assert said.startswith("thunder-func (thunder-func: 1 of 9 points) failed from the oldest")
