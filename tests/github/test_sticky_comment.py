"""The sticky PR comment, with real PyGithub against the fake."""

from __future__ import annotations

import threading
from collections.abc import Callable

import github
import pytest

from bot.github.client import GitHubFailure
from bot.github.fake import BOT_LOGIN, HUMAN_LOGIN, LocalGitHub
from bot.github.sticky import MAX_COMMENT_CHARS, CommentOutcome, upsert_sticky_comment

REPO = "NVIDIA/Fuser"  # seeded by the fake_github fixture
MARKER = "<!-- fusion-perfbot:rmsnorm-bwd -->"


@pytest.fixture
def pr(fake_github: LocalGitHub) -> int:
    return fake_github.state.add_pull_request(
        REPO, "Speed up rmsnorm", author=HUMAN_LOGIN, head_ref="fast"
    ).number


def bodies_by(fake: LocalGitHub, pr: int, login: str) -> list[str]:
    return [c.body for c in fake.state.comments_on(REPO, pr) if c.author == login]


def test_create_update_unchanged(fake_github: LocalGitHub, gh: github.Github, pr: int) -> None:
    first = upsert_sticky_comment(gh, REPO, pr, f"{MARKER}\nratio 1.02", MARKER)
    assert first.action == "created"
    assert first.url == f"{fake_github.web_url}/{REPO}/pull/{pr}#issuecomment-{first.comment_id}"
    assert bodies_by(fake_github, pr, BOT_LOGIN) == [f"{MARKER}\nratio 1.02"]

    second = upsert_sticky_comment(gh, REPO, pr, f"{MARKER}\nratio 1.31", MARKER)
    assert (second.action, second.comment_id) == ("updated", first.comment_id)
    assert bodies_by(fake_github, pr, BOT_LOGIN) == [f"{MARKER}\nratio 1.31"]

    writes_before = len(fake_github.requests("POST")) + len(fake_github.requests("PATCH"))
    third = upsert_sticky_comment(gh, REPO, pr, f"{MARKER}\nratio 1.31", MARKER)
    assert (third.action, third.comment_id) == ("unchanged", first.comment_id)
    assert len(fake_github.requests("POST")) + len(fake_github.requests("PATCH")) == writes_before


def test_marker_is_put_first_when_the_body_lacks_it(
    fake_github: LocalGitHub, gh: github.Github, pr: int
) -> None:
    upsert_sticky_comment(gh, REPO, pr, "ratio 1.02", MARKER)
    assert bodies_by(fake_github, pr, BOT_LOGIN) == [f"{MARKER}\nratio 1.02"]
    assert upsert_sticky_comment(gh, REPO, pr, "ratio 1.02", MARKER).action == "unchanged"


def test_the_marker_counts_in_its_place_only(
    fake_github: LocalGitHub, gh: github.Github, pr: int
) -> None:
    """One of the bot's own comments that holds the marker's text further down (a bisect's
    section quoting it, a note) is not the sticky comment: it is never edited for it."""
    other = fake_github.state.add_comment(REPO, pr, f"a note\n{MARKER}", author=BOT_LOGIN)
    outcome = upsert_sticky_comment(gh, REPO, pr, f"{MARKER}\nratio 1.02", MARKER)
    assert outcome.action == "created" and outcome.comment_id != other.id
    assert other.body == f"a note\n{MARKER}"


def test_reposts_after_deletion(fake_github: LocalGitHub, gh: github.Github, pr: int) -> None:
    first = upsert_sticky_comment(gh, REPO, pr, f"{MARKER} a", MARKER)
    del fake_github.state.comments[first.comment_id]  # a maintainer deleted it
    again = upsert_sticky_comment(gh, REPO, pr, f"{MARKER} a", MARKER)
    assert again.action == "created" and again.comment_id != first.comment_id
    assert bodies_by(fake_github, pr, BOT_LOGIN) == [f"{MARKER} a"]


def test_reposts_when_deleted_between_listing_and_editing(
    fake_github: LocalGitHub, gh: github.Github, pr: int
) -> None:
    first = upsert_sticky_comment(gh, REPO, pr, f"{MARKER} a", MARKER)
    fake_github.inject("PATCH", rf"/issues/comments/{first.comment_id}$", 404)
    again = upsert_sticky_comment(gh, REPO, pr, f"{MARKER} b", MARKER)
    assert again.action == "created" and again.comment_id != first.comment_id


def test_never_edits_a_human_comment_carrying_the_marker(
    fake_github: LocalGitHub, gh: github.Github, human_gh: github.Github, pr: int
) -> None:
    quoted = f"I copied the bot's text: {MARKER} ratio 9.9"
    human_gh.get_repo(REPO).get_issue(pr).create_comment(quoted)
    outcome = upsert_sticky_comment(gh, REPO, pr, f"{MARKER} ratio 1.0", MARKER)
    assert outcome.action == "created"
    assert bodies_by(fake_github, pr, HUMAN_LOGIN) == [quoted]
    assert bodies_by(fake_github, pr, BOT_LOGIN) == [f"{MARKER} ratio 1.0"]


def test_finds_the_bot_comment_on_page_three_of_four(
    fake_github: LocalGitHub, make_client: Callable[..., github.Github], pr: int
) -> None:
    state = fake_github.state
    for i in range(120):
        if i == 70:  # page 3 at 30 comments a page
            bot_id = state.add_comment(REPO, pr, f"{MARKER} old", author=BOT_LOGIN).id
        else:
            state.add_comment(REPO, pr, f"review comment {i}", author=HUMAN_LOGIN)
    outcome = upsert_sticky_comment(make_client(per_page=30), REPO, pr, f"{MARKER} new", MARKER)
    assert (outcome.action, outcome.comment_id) == ("updated", bot_id)
    pages = [r.query.get("page", ["1"])[0] for r in fake_github.requests("GET", r"/comments$")]
    assert pages == ["1", "2", "3", "4"]  # every page read: a newer copy could sit on page 4
    assert len(state.comments_on(REPO, pr)) == 120


def test_duplicates_from_an_earlier_race_are_repaired_oldest_kept(
    fake_github: LocalGitHub, gh: github.Github, human_gh: github.Github, pr: int
) -> None:
    """Two bot comments with the marker (left by a race): the oldest is updated, the other
    deleted; a bot comment without the marker and a human's quote of it stay as they are."""
    human = f"quoting the bot: {MARKER} v0"
    human_gh.get_repo(REPO).get_issue(pr).create_comment(human)
    old = fake_github.state.add_comment(REPO, pr, f"{MARKER} v1", author=BOT_LOGIN)
    newer = fake_github.state.add_comment(REPO, pr, f"{MARKER} v2", author=BOT_LOGIN)
    fake_github.state.add_comment(REPO, pr, "unrelated bot note", author=BOT_LOGIN)
    outcome = upsert_sticky_comment(gh, REPO, pr, f"{MARKER} v3", MARKER)
    assert (outcome.action, outcome.comment_id, outcome.removed) == ("updated", old.id, (newer.id,))
    assert bodies_by(fake_github, pr, BOT_LOGIN) == [f"{MARKER} v3", "unrelated bot note"]
    assert bodies_by(fake_github, pr, HUMAN_LOGIN) == [human]
    again = upsert_sticky_comment(gh, REPO, pr, f"{MARKER} v3", MARKER)
    assert (again.action, again.comment_id, again.removed) == ("unchanged", old.id, ())


def test_a_human_lookalike_older_than_the_bot_comment_is_never_chosen(
    fake_github: LocalGitHub, gh: github.Github, human_gh: github.Github, pr: int
) -> None:
    """The oldest-wins rule counts the bot's own comments only: an older human comment with
    the marker is neither edited nor deleted, and the bot's newer one is the one updated."""
    human = f"{MARKER} (a maintainer pasted the bot's text)"
    human_gh.get_repo(REPO).get_issue(pr).create_comment(human)
    first = upsert_sticky_comment(gh, REPO, pr, f"{MARKER} a", MARKER)
    second = upsert_sticky_comment(gh, REPO, pr, f"{MARKER} b", MARKER)
    assert (second.action, second.comment_id, second.removed) == ("updated", first.comment_id, ())
    assert bodies_by(fake_github, pr, HUMAN_LOGIN) == [human]


def test_two_clients_that_both_find_nothing_leave_one_comment(
    fake_github: LocalGitHub, make_client: Callable[..., github.Github], pr: int
) -> None:
    """The worst interleaving of a race, forced: both list before either posts."""
    fake_github.rendezvous("GET", rf"/issues/{pr}/comments$", parties=2)
    outcomes: dict[str, CommentOutcome] = {}

    def run(name: str) -> None:
        outcomes[name] = upsert_sticky_comment(make_client(), REPO, pr, f"{MARKER} {name}", MARKER)

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(fake_github.requests("POST", rf"/issues/{pr}/comments$")) == 2  # both posted
    kept = [c for c in fake_github.state.comments_on(REPO, pr) if c.author == BOT_LOGIN]
    assert len(kept) == 1 and kept[0].body in (f"{MARKER} a", f"{MARKER} b")
    assert {o.comment_id for o in outcomes.values()} == {kept[0].id}
    assert sorted(len(o.removed) for o in outcomes.values()) in ([0, 1], [1, 1])


def test_rejects_oversized_body_before_any_request(
    fake_github: LocalGitHub, gh: github.Github, pr: int
) -> None:
    with pytest.raises(ValueError, match="at most 65536"):
        upsert_sticky_comment(gh, REPO, pr, MARKER + "x" * MAX_COMMENT_CHARS, MARKER)
    with pytest.raises(ValueError, match="marker"):
        upsert_sticky_comment(gh, REPO, pr, "body", "")
    assert fake_github.requests() == []
    exact = MARKER + "x" * (MAX_COMMENT_CHARS - len(MARKER))
    assert upsert_sticky_comment(gh, REPO, pr, exact, MARKER).action == "created"


def test_failures_name_the_step(fake_github: LocalGitHub, gh: github.Github, pr: int) -> None:
    fake_github.inject("POST", r"/comments$", 500)
    with pytest.raises(GitHubFailure) as caught:
        upsert_sticky_comment(gh, REPO, pr, f"{MARKER} a", MARKER)
    assert (caught.value.step, caught.value.status) == (f"create comment on {REPO}#{pr}", 500)
    with pytest.raises(GitHubFailure) as caught:
        upsert_sticky_comment(gh, REPO, 999, f"{MARKER} a", MARKER)
    assert (caught.value.step, caught.value.status) == (f"list comments on {REPO}#999", 404)
    assert bodies_by(fake_github, pr, BOT_LOGIN) == []


def test_app_token_needs_the_login_passed(
    fake_github: LocalGitHub, make_client: Callable[..., github.Github], pr: int
) -> None:
    """Actions' GITHUB_TOKEN cannot call GET /user; the caller names the account instead."""
    fake_github.state.add_token("installation-token", BOT_LOGIN, can_read_user=False)
    app = make_client("installation-token")
    with pytest.raises(GitHubFailure) as caught:
        upsert_sticky_comment(app, REPO, pr, f"{MARKER} a", MARKER)
    assert caught.value.status == 403 and "GET /user" in caught.value.step
    first = upsert_sticky_comment(app, REPO, pr, f"{MARKER} a", MARKER, bot_login=BOT_LOGIN)
    again = upsert_sticky_comment(app, REPO, pr, f"{MARKER} b", MARKER, bot_login=BOT_LOGIN)
    assert (first.action, again.action) == ("created", "updated")
