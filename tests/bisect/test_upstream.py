"""Which commits lie between two builds (bot/bisect/upstream.py) and which alert a bisect
follows (bot/bisect/watch_plan.py): pure, on the shapes GitHub and ``history --json`` give."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.under_test.spec import parse_spec
from bot.bisect.upstream import UpstreamError, Window, commit_spec, in_order, window_of
from bot.bisect.watch_plan import Target, build_spec, targets

SHA = [f"{n:040x}" for n in range(1, 6)]
REPO = "Lightning-AI/lightning-thunder"


def _spec(text: str) -> Any:
    return parse_spec(text, "thunder")


def test_two_nightlies_span_whole_days_and_two_commits_their_compare() -> None:
    w = window_of("thunder", _spec("lightning-thunder==0.2.7.dev20251102"),
                  _spec("lightning-thunder==0.2.7.dev20251123"))  # fmt: skip
    assert isinstance(w, Window) and w.repository == REPO
    assert (w.since.isoformat(), w.until.isoformat()) == (  # type: ignore[union-attr]
        "2025-11-02T00:00:00+00:00",
        "2025-11-23T23:59:59+00:00",
    )
    g = window_of("thunder", _spec(f"git+https://github.com/{REPO}@{SHA[0]}"),
                  _spec(f"git+https://github.com/{REPO}@{SHA[1]}"))  # fmt: skip
    assert isinstance(g, Window) and (g.base, g.head) == (SHA[0], SHA[1])


@pytest.mark.parametrize(
    ("good", "bad", "why"),
    [
        ("lightning-thunder==0.2.6", "lightning-thunder==0.2.7.dev20251123", "not both nightlies"),
        ("lightning-thunder==0.2.7.dev20251123", "lightning-thunder==0.2.7.dev20251102",
         "was built before"),
        (f"git+https://github.com/{REPO}@{SHA[0]}", f"git+https://github.com/a/b@{SHA[1]}",
         "not of one GitHub repository"),
    ],
)  # fmt: skip
def test_builds_without_a_range_say_why(good: str, bad: str, why: str) -> None:
    said = window_of("thunder", _spec(good), _spec(bad))
    assert isinstance(said, str) and why in said


def _item(sha: str, login: str | None = "ada") -> dict[str, Any]:
    author = {"name": "Ada Example", "date": "2027-01-04T15:10:00Z"}
    return {"sha": sha, "commit": {"message": "Title\n\nbody", "author": author},
            "author": {"login": login} if login else None}  # fmt: skip


def test_listing_is_read_oldest_first_and_checked() -> None:
    got = in_order(REPO, [_item(SHA[2]), _item(SHA[1], None)], newest_first=True)
    assert [c.sha for c in got] == [SHA[1], SHA[2]]
    assert (got[0].title, got[0].author_login, got[1].author_login) == ("Title", None, "ada")
    assert got[1].url == f"https://github.com/{REPO}/commit/{SHA[2]}"
    assert commit_spec(got[0], "file:///tmp/t.git") == f"git+file:///tmp/t.git@{SHA[1]}"
    with pytest.raises(UpstreamError, match="twice"):
        in_order(REPO, [_item(SHA[1]), _item(SHA[1])], newest_first=True)
    with pytest.raises(UpstreamError, match="40-hex"):
        in_order(REPO, [_item("main")], newest_first=False)


def _history(good: dict[str, Any], bad: dict[str, Any], state: str = "regressed") -> Any:
    point = {"point": "thunder-prims/bfloat16/2048x8192"}
    change = {"last_good": "a" * 40, "first_bad": "b" * 40, "points": [point]}
    return {
        "machines": [{
            "machine": "m",
            "commits": [{"sha": "a" * 40, "build": good}, {"sha": "b" * 40, "build": bad}],
            "changes": [change], "breaks": [],
        }],
        "alerts": [{"key": "K", "machine": "m", "last_good": "a" * 40, "first_bad": "b" * 40,
                    "state": state, "primary": REPO}],
    }  # fmt: skip


def _record(thunder: str, nvfuser: str = "0.2.36+git7e04d26", **more: Any) -> dict[str, Any]:
    return {"versions": {"thunder": thunder, "nvfuser": nvfuser}, "under_test": None,
            "thunder_variant": "stock", "slowdown": None, **more}  # fmt: skip


def test_a_thunder_step_is_followed_with_the_alerts_points() -> None:
    (t,), skipped = targets(_history(_record("0.2.7.dev20251102"), _record("0.2.7.dev20251123")))
    assert skipped == ()
    assert t == Target("K", REPO, "m", "thunder", "lightning-thunder==0.2.7.dev20251102",
                       "lightning-thunder==0.2.7.dev20251123", ("bfloat16/2048x8192",),
                       "a" * 40, "b" * 40)  # fmt: skip


@pytest.mark.parametrize(
    ("good", "bad", "why"),
    [
        (_record("0.2.6"), _record("0.2.6"), "neither Thunder nor nvFuser changed"),
        (_record("0.2.6"), _record("0.2.7", "0.2.37"), "both changed"),
        (_record("0.2.6"), _record("0.2.6", "0.2.37+gitabc"), "not named by their records"),
        (_record("0.2.6"), _record("0.2.6", thunder_variant="unfused-backward"),
         "unfused-backward variant"),
    ],
)  # fmt: skip
def test_an_alert_a_bisect_cannot_follow_is_named(good: Any, bad: Any, why: str) -> None:
    found, (line,) = targets(_history(good, bad))
    assert found == () and line.startswith("K: ") and why in line


def test_a_recovered_alert_is_not_followed() -> None:
    assert targets(_history(_record("a"), _record("b"), "recovered")) == ((), ())


def test_the_package_under_test_record_names_the_build() -> None:
    git = {"package": "nvfuser", "kind": "git", "repository": "NVIDIA/Fuser", "vcs_commit": SHA[0]}
    assert (
        build_spec({"under_test": git}, "nvfuser")
        == f"git+https://github.com/NVIDIA/Fuser@{SHA[0]}"
    )
    wheel = {"package": "nvfuser", "kind": "wheel", "distribution": "nvfuser-cu130-torch210",
             "version": "0.2.36.dev20260301"}  # fmt: skip
    assert (
        build_spec({"under_test": wheel}, "nvfuser") == "nvfuser-cu130-torch210==0.2.36.dev20260301"
    )
