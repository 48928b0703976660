"""What the bisect says: where to read the changes, and the issue section's parts (pure)."""

from __future__ import annotations

from bot.bisect.compare import changes
from bot.bisect.driver import Outcome, Plan, Row
from bot.bisect.search import Found, Stuck
from bot.bisect.timeline import Build, Timeline, make_timeline
from bot.bisect.words import section, to_text
from bot.config import VerdictSettings

A, B = "0123456789abcdef0123456789abcdef01234567", "fedcba9876543210fedcba9876543210fedcba98"
GIT = "git+https://github.com/Lightning-AI/lightning-thunder@{}"


def _builds(*specs: str, package: str = "thunder") -> tuple[Timeline, tuple[Build, ...]]:
    t = make_timeline(package, specs[0], specs[-1], specs[1:-1])
    return t, t.builds


def test_two_commits_of_the_package_link_github_s_compare_view() -> None:
    _, (g, b) = _builds(GIT.format(A), GIT.format(B))
    c = changes("thunder", g, b)
    assert c.url == f"https://github.com/Lightning-AI/lightning-thunder/compare/{A}...{B}"
    assert c.markdown("x") == f"[x]({c.url})"


def test_two_nightlies_link_the_commits_between_their_build_dates() -> None:
    _, (g, b) = _builds(
        "nvfuser-cu130-torch210==0.2.35.dev20260215",
        "nvfuser-cu130-torch210==0.2.36.dev20260301",
        package="nvfuser",
    )
    c = changes("nvfuser", g, b)
    assert (
        c.url == "https://github.com/NVIDIA/Fuser/commits/main/?since=2026-02-15&until=2026-03-01"
    )
    assert "2026-02-15 to 2026-03-01" in c.text and c.markdown("x").startswith("[x](")


def test_without_commits_or_dates_nothing_is_linked() -> None:
    _, (g, b) = _builds("lightning-thunder==0.2.5", "lightning-thunder==0.2.6")
    c = changes("thunder", g, b)
    assert c.url is None and c.markdown("x") == "x" and "compare the two builds by hand" in c.text
    _, (g, b) = _builds("git+file:///tmp/thunder@" + A, "git+file:///tmp/thunder@" + B)
    assert changes("thunder", g, b).url is None  # a local repository: no page to link


def _outcome(step: Found | Stuck, names: tuple[str, ...]) -> Outcome:
    return Outcome("found" if isinstance(step, Found) else "stuck", step,
                   tuple(Row(i, n, (), None) for i, n in enumerate(names)), 0)  # fmt: skip


def test_the_section_names_both_builds_and_links_the_changes() -> None:
    t, _ = _builds("lightning-thunder==0.2.7.dev20260118", "lightning-thunder==0.2.7.dev20260201")
    plan = Plan(t, ("float32/2048x8192",), ("nvfuser", "thunder-prims"), VerdictSettings())
    body = section(_outcome(Found(*t.names), t.names), plan)
    assert body.splitlines()[0] == "<!-- fusion-perfbot-bisect:thunder -->"
    assert "**First bad build:** lightning-thunder\\=\\=0.2.7.dev20260201" in body
    assert (
        "[Lightning-AI/lightning-thunder commits on main from 2026-01-18 to 2026-02-01" in body
        and "(https://github.com/Lightning-AI/lightning-thunder/commits/main/?since=2026-01-18"
        "&until=2026-02-01)"
        in body
    )
    assert "Why it stopped" not in body and "in this call" not in body


def test_a_stuck_bisect_says_why_and_names_no_bracket_it_does_not_have() -> None:
    t, _ = _builds("lightning-thunder==0.2.6", "lightning-thunder==0.2.7")
    plan = Plan(t, ("float32/2048x8192",), ("nvfuser",), VerdictSettings())
    out = _outcome(Stuck("the known-bad build is good against the known-good one", t.names[1]),
                   t.names)  # fmt: skip
    body, text = section(out, plan), to_text(out, plan)
    assert "### Bisect of Thunder builds: stopped without an answer" in body
    assert "**No first bad build named.** last build measured good: none yet" in body
    assert "**Why it stopped:** the known" in body and "First bad build" not in body
    assert text.splitlines()[:2] == [
        "bisect thunder: stopped without an answer",
        "no first bad build named; last build measured good: none yet; first measured bad: "
        "none yet (the first bad build is that one or one before it)",
    ]
    assert "first bad build:" not in text
