"""make_github's retry policy and GitHubFailure, with real PyGithub against the fake."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Callable

import github
import pytest

from bot.github.client import GitHubFailure, authenticated_login, github_step, make_github
from bot.github.fake import BOT_LOGIN, BOT_TOKEN, LocalGitHub

PRIMARY = "NVIDIA/Fuser"  # seeded by the fake_github fixture
SECONDARY = "Lightning-AI/lightning-thunder"
ISSUE_PATH = r"/issues/1$"


@pytest.fixture
def issue_number(fake_github: LocalGitHub) -> int:
    return fake_github.state.add_issue(PRIMARY, "Slow backward", author=BOT_LOGIN).number


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits the client asks for, recorded instead of slept: what it would wait is then
    exact, and the test spends no time on it."""
    asked: list[float] = []
    monkeypatch.setattr(time, "sleep", asked.append)
    return asked


def fetch_title(gh: github.Github, number: int) -> str:
    with github_step(f"read {PRIMARY}#{number}"):
        return gh.get_repo(PRIMARY).get_issue(number).title


def test_retries_a_server_error_then_succeeds(
    fake_github: LocalGitHub, gh: github.Github, issue_number: int
) -> None:
    fake_github.inject("GET", ISSUE_PATH, 500)
    assert fetch_title(gh, issue_number) == "Slow backward"
    assert [r.status for r in fake_github.requests("GET", ISSUE_PATH)] == [500, 200]


def test_persistent_server_error_fails_with_the_last_status(
    fake_github: LocalGitHub, make_client: Callable[..., github.Github], issue_number: int
) -> None:
    fake_github.inject("GET", ISSUE_PATH, 502, times=None)
    with pytest.raises(GitHubFailure) as caught:
        fetch_title(make_client(retries=2), issue_number)
    assert (caught.value.step, caught.value.status) == (f"read {PRIMARY}#1", 502)
    assert str(caught.value) == f"GitHub step 'read {PRIMARY}#1' failed: HTTP 502: Server Error"
    assert len(fake_github.requests("GET", ISSUE_PATH)) == 3  # one try and two retries


def test_a_create_is_not_repeated_after_a_server_error(
    fake_github: LocalGitHub, gh: github.Github
) -> None:
    """A 5xx may come after the issue was created; repeating the POST could file it twice."""
    fake_github.inject("POST", r"/issues$", 502)
    with pytest.raises(GitHubFailure) as caught, github_step("open issue"):
        gh.get_repo(PRIMARY).create_issue("t")
    assert caught.value.status == 502
    assert len(fake_github.requests("POST", r"/issues$")) == 1


def test_secondary_limit_is_retried_after_retry_after(
    fake_github: LocalGitHub, gh: github.Github, slept: list[float]
) -> None:
    fake_github.inject("POST", r"/issues$", 403, headers={"Retry-After": "1"})
    with github_step("open issue"):
        created = gh.get_repo(PRIMARY).create_issue("t")
    assert [s for s in slept if s > 0] == [1.0]  # it honoured Retry-After before trying again
    assert created.number == 1
    assert [r.status for r in fake_github.requests("POST", r"/issues$")] == [403, 201]


def test_429_with_retry_after_zero_is_retried(fake_github: LocalGitHub, gh: github.Github) -> None:
    fake_github.inject("GET", r"^/user$", 429, headers={"Retry-After": "0"})
    assert authenticated_login(gh) == BOT_LOGIN
    assert [r.status for r in fake_github.requests("GET", r"^/user$")] == [429, 200]


def test_secondary_limit_without_retry_after_waits_secondary_wait(
    fake_github: LocalGitHub, make_client: Callable[..., github.Github]
) -> None:
    fake_github.inject("GET", r"^/user$", 403)  # the fake's default 403 body is the limit text
    assert authenticated_login(make_client(secondary_wait=0)) == BOT_LOGIN
    with pytest.raises(GitHubFailure) as caught:  # the default minute exceeds the 5 s budget
        fake_github.inject("GET", r"^/user$", 403)
        authenticated_login(make_client())
    assert "wait 60 s" in str(caught.value)


def test_retry_after_beyond_the_budget_fails_fast(
    fake_github: LocalGitHub, gh: github.Github, slept: list[float]
) -> None:
    fake_github.inject("POST", r"/issues$", 403, headers={"Retry-After": "3600"})
    with pytest.raises(GitHubFailure) as caught, github_step("open issue"):
        gh.get_repo(PRIMARY).create_issue("t")
    assert [s for s in slept if s > 0] == []  # it did not sit out the hour, nor any of it
    assert caught.value.status == 403
    assert "asked to wait 3600 s, more than the 5 s" in str(caught.value)
    assert len(fake_github.requests("POST", r"/issues$")) == 1


def test_spent_primary_limit_fails_fast_instead_of_sleeping_until_reset(
    fake_github: LocalGitHub, gh: github.Github, slept: list[float]
) -> None:
    fake_github.state.set_rate_limit(BOT_LOGIN, remaining=0, reset_in=3000)
    with pytest.raises(GitHubFailure) as caught:
        authenticated_login(gh)
    assert [s for s in slept if s > 0] == []
    assert caught.value.status == 403 and "rate limited" in caught.value.detail


def test_forbidden_without_rate_limit_is_not_retried(
    fake_github: LocalGitHub, make_client: Callable[..., github.Github]
) -> None:
    fake_github.state.add_token("fuser-only", BOT_LOGIN, repos=[PRIMARY])
    scoped = make_client("fuser-only")
    with pytest.raises(GitHubFailure) as caught, github_step("list issues"):
        list(scoped.get_repo(SECONDARY).get_issues())
    assert caught.value.status == 403
    assert caught.value.detail == "Resource not accessible by integration"
    assert len(fake_github.requests("GET", rf"/repos/{SECONDARY}/issues$")) == 1


def test_slow_response_times_out(
    fake_github: LocalGitHub, make_client: Callable[..., github.Github], issue_number: int
) -> None:
    fake_github.inject("GET", ISSUE_PATH, None, delay=4)
    with pytest.raises(GitHubFailure) as caught:
        fetch_title(make_client(timeout=0.5), issue_number)  # rounded up to PyGithub's 1 s
    assert caught.value.status is None and "timed out" in caught.value.detail
    assert len(fake_github.requests("GET", ISSUE_PATH)) == 1  # a read timeout is not retried


def test_unreachable_server_is_a_failure_not_a_crash() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    gh = make_github(f"http://127.0.0.1:{port}/api/v3", BOT_TOKEN, backoff_factor=0)
    with pytest.raises(GitHubFailure) as caught:
        authenticated_login(gh)
    assert caught.value.status is None and "connection failed" in caught.value.detail


def test_bad_token_and_app_token_fail_with_named_step(
    fake_github: LocalGitHub, make_client: Callable[..., github.Github]
) -> None:
    with pytest.raises(GitHubFailure) as caught:
        authenticated_login(make_client("wrong-token"))
    assert caught.value.status == 401
    assert caught.value.step == "identify the bot account (GET /user)"
    fake_github.state.add_token("app-token", BOT_LOGIN, can_read_user=False)
    with pytest.raises(GitHubFailure) as caught:
        authenticated_login(make_client("app-token"))
    assert caught.value.status == 403


def test_token_stays_out_of_repr_errors_and_logs(
    fake_github: LocalGitHub,
    make_client: Callable[..., github.Github],
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "s3cr3t-t0ken-value"
    fake_github.state.add_token(secret, BOT_LOGIN)
    gh = make_client(secret)
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="github")  # PyGithub logs request headers here
    fake_github.inject("GET", r"^/user$", 500)
    assert authenticated_login(gh) == BOT_LOGIN
    fake_github.inject("GET", r"^/user$", 401, times=None)
    with pytest.raises(GitHubFailure) as caught:
        authenticated_login(gh)
    assert "Authorization" in caplog.text  # the headers were logged, masked
    for text in (repr(gh), str(caught.value), repr(caught.value), caplog.text):
        assert secret not in text
    with pytest.raises(ValueError):
        make_github(fake_github.base_url, "")
