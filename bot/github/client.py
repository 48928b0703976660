"""A deliberately configured PyGithub client, and the one error type the bot's GitHub code raises.

PyGithub's defaults suit an interactive script, not a CI bot: it waits 0.25 s before every
request and 1 s before every write, and its retry sleeps until a rate limit resets (up to an
hour) while a CI job's clock runs. Here every wait is bounded by `max_retry_wait`, and a
failure surfaces as `GitHubFailure`, which names the step and the HTTP status, so a red job
says what broke instead of a stack trace from inside requests.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import github
import requests
from github import Auth, GithubException
from urllib3 import BaseHTTPResponse
from urllib3.connectionpool import ConnectionPool
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

from bot.config import Config

USER_AGENT = "fusion-perfbot"
SERVER_ERRORS = frozenset({500, 502, 503, 504})
RATE_LIMIT_STATUSES = frozenset({403, 429})
#: Methods whose repetition cannot create anything twice. POST is absent on purpose: a 5xx
#: answer to "create issue" may come after the issue was created, so only the caller, who
#: can list first, may decide to try again.
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"})
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class GitHubFailure(Exception):
    """A GitHub step failed for good (after bounded retries). `status` None: no HTTP answer."""

    def __init__(self, step: str, status: int | None, detail: str) -> None:
        self.step = step
        self.status = status
        self.detail = detail
        answer = f"HTTP {status}" if status is not None else "no HTTP answer"
        super().__init__(f"GitHub step '{step}' failed: {answer}: {detail}")


class _WaitTooLong(GithubException):
    """GitHub asked for a pause longer than this run may wait."""

    def __init__(self, status: int, data: Any, headers: Any, wait: float, budget: float) -> None:
        super().__init__(status, data, headers)
        self.wait = wait
        self.budget = budget


class BoundedRetry(Retry):
    """urllib3 Retry that follows GitHub's retry advice but never waits past a budget.

    Retries: 500/502/503/504 for idempotent methods; 403/429 rate limits for every method
    (GitHub rejects those before acting), waiting `Retry-After`, else until
    `X-RateLimit-Reset` when the primary limit is spent, else `secondary_wait`. When the
    total wait for one request would exceed `max_wait`, it raises at once instead of
    sleeping. A 403 that is not a rate limit (missing permission) is not retried. Read
    timeouts are not retried: the server may already have acted, and a stalled API is not
    helped by waiting longer.
    """

    def __init__(
        self,
        *,
        max_wait: float,
        secondary_wait: float = 60.0,
        waited: float = 0.0,
        planned: float = 0.0,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("read", False)
        kwargs.setdefault("raise_on_status", False)
        kwargs.setdefault("respect_retry_after_header", True)
        super().__init__(**kwargs)
        self.max_wait = max_wait
        self.secondary_wait = secondary_wait
        self.waited = waited
        self.planned = planned

    def new(self, **kw: Any) -> BoundedRetry:
        kw.setdefault("max_wait", self.max_wait)
        kw.setdefault("secondary_wait", self.secondary_wait)
        kw.setdefault("waited", self.waited)
        kw.setdefault("planned", 0.0)
        return super().new(**kw)

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if status_code in RATE_LIMIT_STATUSES:
            return True  # increment() tells a rate limit from a permission error
        return status_code in SERVER_ERRORS and method.upper() in IDEMPOTENT_METHODS

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: BaseHTTPResponse | None = None,
        error: Exception | None = None,
        _pool: ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> BoundedRetry:
        if response is None:  # no answer (connection refused): back off within the budget
            nxt: BoundedRetry = super().increment(method, url, response, error, _pool, _stacktrace)
            nxt.planned = min(nxt.get_backoff_time(), max(0.0, self.max_wait - self.waited))
            nxt.waited = self.waited + nxt.planned
            return nxt
        data = _json_body(response)
        headers = dict(response.headers)
        wait = self._rate_limit_wait(response.status, headers, data)
        if response.status in RATE_LIMIT_STATUSES and wait is None:
            raise github.Requester.Requester.createException(response.status, headers, data)
        try:
            nxt = super().increment(method, url, response, error, _pool, _stacktrace)
        except MaxRetryError:
            # Out of attempts: report the last real answer, not urllib3's summary.
            raise github.Requester.Requester.createException(
                response.status, headers, data
            ) from None
        if wait is None:
            wait = nxt.get_backoff_time()
        if self.waited + wait > self.max_wait:
            raise _WaitTooLong(response.status, data, headers, wait, self.max_wait)
        nxt.waited = self.waited + wait
        nxt.planned = wait
        return nxt

    def _rate_limit_wait(self, status: int, headers: dict[str, str], data: Any) -> float | None:
        """Seconds GitHub asks us to wait, or None when the answer is not a rate limit."""
        lower = {k.lower(): v for k, v in headers.items()}
        if "retry-after" in lower:
            return self.parse_retry_after(lower["retry-after"])
        if status not in RATE_LIMIT_STATUSES:
            return None
        reset = lower.get("x-ratelimit-reset", "")
        if lower.get("x-ratelimit-remaining") == "0" and reset.isdigit():
            return max(0.0, int(reset) - time.time()) + 1.0
        message = data.get("message", "") if isinstance(data, dict) else ""
        if status == 429 or github.Requester.Requester.isRateLimitError(str(message)):
            return self.secondary_wait
        return None

    def sleep(self, response: BaseHTTPResponse | None = None) -> None:
        if self.planned > 0:
            time.sleep(self.planned)


def _json_body(response: BaseHTTPResponse) -> Any:
    try:
        return json.loads(response.data or b"null")
    except (ValueError, UnicodeDecodeError):
        return None


def make_github(
    api_url: str,
    token: str,
    *,
    timeout: float = 15.0,
    max_retry_wait: float = 60.0,
    retries: int = 3,
    backoff_factor: float = 0.5,
    secondary_wait: float = 60.0,
    per_page: int = 100,
    seconds_between_requests: float | None = None,
    seconds_between_writes: float | None = None,
) -> github.Github:
    """A PyGithub client for `api_url` (e.g. $GITHUB_API_URL) that fails fast and clearly.

    `timeout` is rounded up to whole seconds (PyGithub accepts only an int). Pacing defaults
    to GitHub's advice for writes (1 s apart, to stay under the secondary limit of about 80
    content-creating requests a minute) and to none for a loopback test server; pass numbers
    to override. Listings ask for 100 items a page, GitHub's maximum, to spend fewer requests.
    """
    if not token:
        raise ValueError("empty GitHub token")
    loopback = urlsplit(api_url).hostname in LOOPBACK_HOSTS
    if seconds_between_requests is None:
        seconds_between_requests = 0.0
    if seconds_between_writes is None:
        seconds_between_writes = 0.0 if loopback else 1.0
    retry = BoundedRetry(
        max_wait=max_retry_wait,
        secondary_wait=secondary_wait,
        total=retries,
        backoff_factor=backoff_factor,
    )
    return github.Github(
        auth=Auth.Token(token),
        base_url=api_url.rstrip("/"),
        timeout=max(1, math.ceil(timeout)),
        user_agent=USER_AGENT,
        per_page=per_page,
        retry=retry,
        seconds_between_requests=seconds_between_requests,
        seconds_between_writes=seconds_between_writes,
        lazy=True,
    )


@contextmanager
def github_step(step: str) -> Iterator[None]:
    """Run GitHub calls as one named step: any failure leaves as GitHubFailure(step, ...)."""
    try:
        yield
    except GitHubFailure:
        raise
    except _WaitTooLong as exc:
        detail = (
            f"rate limited: GitHub asked to wait {exc.wait:.0f} s, "
            f"more than the {exc.budget:.0f} s this run may wait"
        )
        raise GitHubFailure(step, exc.status, detail) from exc
    except GithubException as exc:
        raise GitHubFailure(step, exc.status, _message(exc.data)) from exc
    except requests.Timeout as exc:
        raise GitHubFailure(step, None, "timed out waiting for GitHub") from exc
    except requests.RequestException as exc:
        raise GitHubFailure(step, None, f"connection failed: {type(exc).__name__}") from exc


def github_for(cfg: Config, token: str) -> github.Github:
    """A client as the configuration says ([github] api_url, timeout_s, max_retry_wait_s)."""
    return make_github(
        cfg.api_url, token, timeout=cfg.timeout_s, max_retry_wait=cfg.max_retry_wait_s
    )


def _message(data: Any) -> str:
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return str(data["message"])[:300]
    return "no message"


def authenticated_login(gh: github.Github) -> str:
    """The login this client acts as (GET /user).

    App installation tokens, Actions' GITHUB_TOKEN included, get 403 here: callers that use
    one pass the bot's login explicitly instead (e.g. "github-actions[bot]").
    """
    with github_step("identify the bot account (GET /user)"):
        return str(gh.get_user().login)
