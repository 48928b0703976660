"""A main-branch alert on a history of builds (nightlies of a package under test) names the two
builds and where the upstream commits between them are (issue 41): a made key is no commit a
maintainer can open."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from history_github import CONFIG, github_env
from paths import DATA

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, LocalGitHub
from bot.history.between import between_builds
from bot.history.load import load_histories
from bot.history.series import Commit, History
from bot.results.types import CommitResults, Provenance

THUNDER = "https://github.com/Lightning-AI/lightning-thunder"
THUNDER_REPO = "Lightning-AI/lightning-thunder"


def _commit(sha: str, day: str, under_test: dict[str, str] | None) -> Commit:
    ms = int(datetime.fromisoformat(day).replace(tzinfo=timezone.utc).timestamp() * 1000)
    record = {"under_test": under_test} if under_test is not None else {}
    prov = Provenance(Path("/nowhere"), 1, record)
    run = CommitResults("nvidia-h200", sha, Path("/nowhere"), {}, prov, ms)
    return Commit(sha, ms, (run,))


def _wheel(version: str) -> dict[str, str]:
    spec = f"lightning_thunder-{version}-py3-none-any.whl"
    return {"package": "thunder", "kind": "wheel", "spec": spec, "version": version}


def _between(good: Commit, bad: Commit) -> str | None:
    return between_builds(History("nvidia-h200", (good, bad)), good.sha, bad.sha)


def test_two_nightlies_link_the_commits_between_their_build_dates() -> None:
    said = _between(
        _commit("a" * 40, "2025-11-09", _wheel("0.2.7.dev20251109")),
        _commit("b" * 40, "2025-11-16", _wheel("0.2.7.dev20251116")),
    )
    assert said == (
        "Thunder 0.2.7.dev20251109 → 0.2.7.dev20251116: [Lightning-AI/lightning-thunder commits "
        "on main from 2025-11-09 to 2025-11-16 \\(the two nightlies' build dates\\)]"
        f"({THUNDER}/commits/main/?since=2025-11-09&until=2025-11-16)"
    )


def test_a_release_is_dated_by_its_key_its_wheel_s_build_day() -> None:
    said = _between(
        _commit("a" * 40, "2025-10-22", _wheel("0.2.6")),
        _commit("b" * 40, "2025-10-26", _wheel("0.2.7.dev20251026")),
    )
    assert said is not None and said.startswith("Thunder 0.2.6 → 0.2.7.dev20251026: [")
    assert "\\(the two builds' build dates\\)" in said
    assert said.endswith("/commits/main/?since=2025-10-22&until=2025-10-26)")


def test_a_release_keyed_before_its_wheel_was_dated_links_nothing() -> None:
    """Keys made before releases were dated carry 2000-01-01: no day to link from."""
    (h,) = load_histories([DATA / "h200-under-test" / "thunder-broken-pair" / "results"])
    good, bad = (c.sha for c in h.commits)
    said = between_builds(h, good, bad)
    assert said is not None and said.startswith("Thunder 0.2.5 → 0.2.6: no commits or build")
    assert "](" not in said


def test_git_builds_link_the_compare_view_and_this_repository_s_commits_nothing() -> None:
    git = {"package": "thunder", "kind": "git", "repository": "Lightning-AI/lightning-thunder"}
    good, bad = ("1" * 40, "2" * 40)
    said = _between(
        _commit("a" * 40, "2025-11-09", {**git, "version": "0.2.7", "vcs_commit": good,
                "spec": f"git+{THUNDER}@{good}"}),
        _commit("b" * 40, "2025-11-16", {**git, "version": "0.2.7", "vcs_commit": bad,
                "spec": f"git+{THUNDER}@{bad}"}),
    )  # fmt: skip
    assert said is not None and said.endswith(f"({THUNDER}/compare/{good}...{bad})")
    assert (
        _between(_commit("a" * 40, "2025-11-09", None), _commit("b" * 40, "2025-11-16", None))
        is None
    )


def test_the_watch_s_undated_day_is_the_keys() -> None:
    """between.py keeps its own copy: the watch runs where only the bot is installed."""
    from benchmarks.under_test.keys import UNDATED
    from bot.history import between

    assert between.UNDATED == UNDATED


def test_the_alert_on_real_builds_names_them_once_in_each_issue(
    fake_github: LocalGitHub, tmp_path: Path
) -> None:
    """Thunder 0.2.6 then 0.2.5 (its executor gone): a break between two builds keyed before
    releases were dated, so the builds are named and nothing is linked."""
    order = tmp_path / "order.txt"
    order.write_text("977510d7\n0e8c6c35\n", encoding="utf-8")
    folder = DATA / "h200-under-test" / "thunder-broken-pair" / "results"
    argv = ["history", "--results", str(folder), "--order", str(order), "--min-after", "1"]
    assert cli.main([*argv, *CONFIG], env=github_env(fake_github)) == ExitCode.BROKEN
    (issue,) = [i for i in fake_github.state.issues(THUNDER_REPO) if i.author == BOT_LOGIN]
    body = issue.body or ""
    assert body.count("Between the two builds: Thunder 0.2.6 → 0.2.5: no commits or build") == 1
