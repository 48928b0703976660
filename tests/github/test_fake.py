"""The fake GitHub itself, over raw HTTP (requests) and through PyGithub."""

from __future__ import annotations

from typing import Any

import github
import pytest
import requests

from bot.github.fake import BOT_LOGIN, BOT_TOKEN, HUMAN_LOGIN, HUMAN_TOKEN, LocalGitHub

PRIMARY = "NVIDIA/Fuser"  # seeded by the fake_github fixture
SECONDARY = "Lightning-AI/lightning-thunder"


def call(
    fake: LocalGitHub,
    method: str,
    path: str,
    token: str | None = BOT_TOKEN,
    **kwargs: Any,
) -> requests.Response:
    headers = {"Authorization": f"token {token}"} if token else {}
    return requests.request(method, fake.base_url + path, headers=headers, timeout=5, **kwargs)


def links(response: requests.Response) -> dict[str, str]:
    return {rel: link["url"] for rel, link in response.links.items()}


def seed_comments(fake: LocalGitHub, count: int) -> int:
    pr = fake.state.add_pull_request(PRIMARY, "Speed up", author=HUMAN_LOGIN, head_ref="fast")
    for i in range(count):
        fake.state.add_comment(PRIMARY, pr.number, f"comment {i}", author=HUMAN_LOGIN)
    return pr.number


def test_pagination_link_headers_and_per_page(fake_github: LocalGitHub) -> None:
    number = seed_comments(fake_github, 75)
    path = f"/repos/{PRIMARY}/issues/{number}/comments"

    first = call(fake_github, "GET", path, params={"per_page": 30})
    assert [c["body"] for c in first.json()] == [f"comment {i}" for i in range(30)]
    rels = links(first)
    assert set(rels) == {"next", "last"}
    assert rels["next"].startswith(fake_github.base_url + path)
    assert "page=2" in rels["next"] and "per_page=30" in rels["next"]
    assert "page=3" in rels["last"]

    last = requests.get(rels["last"], headers={"Authorization": f"token {BOT_TOKEN}"}, timeout=5)
    assert [c["body"] for c in last.json()] == [f"comment {i}" for i in range(60, 75)]
    assert set(links(last)) == {"prev", "first"}

    assert len(call(fake_github, "GET", path).json()) == 30  # GitHub's default page size
    assert len(call(fake_github, "GET", path, params={"per_page": 500}).json()) == 75  # max 100
    assert "Link" not in call(fake_github, "GET", path, params={"per_page": 100}).headers


def test_issue_listing_filters_state_and_labels(fake_github: LocalGitHub) -> None:
    state = fake_github.state
    a = state.add_issue(PRIMARY, "a", author=HUMAN_LOGIN, labels=["perf", "bug"])
    b = state.add_issue(PRIMARY, "b", author=HUMAN_LOGIN, labels=["perf"])
    c = state.add_issue(PRIMARY, "c", author=HUMAN_LOGIN)
    pr = state.add_pull_request(PRIMARY, "pr", author=HUMAN_LOGIN, head_ref="x")
    b.state = "closed"
    path = f"/repos/{PRIMARY}/issues"

    def numbers(**params: str) -> list[int]:
        response = call(fake_github, "GET", path, params=params)
        assert response.status_code == 200
        return [issue["number"] for issue in response.json()]

    assert numbers() == [pr.number, c.number, a.number]  # open by default, newest first
    assert numbers(state="all") == [pr.number, c.number, b.number, a.number]  # PRs are issues
    assert numbers(state="closed") == [b.number]
    assert numbers(state="all", labels="perf") == [b.number, a.number]
    assert numbers(state="all", labels="PERF,bug") == [a.number]  # every label, any case
    assert numbers(state="all", direction="asc") == [a.number, b.number, c.number, pr.number]
    assert call(fake_github, "GET", path, params={"state": "bogus"}).status_code == 422
    listed = call(fake_github, "GET", path, params={"state": "all"}).json()
    assert [("pull_request" in i) for i in listed] == [True, False, False, False]


def test_authentication_scopes_and_missing_objects(fake_github: LocalGitHub) -> None:
    state = fake_github.state
    state.add_token("fuser-only", BOT_LOGIN, repos=[PRIMARY])
    state.add_token("fork-pr", BOT_LOGIN, read_only=True)
    state.add_token("app", BOT_LOGIN, can_read_user=False)

    assert call(fake_github, "GET", "/user").json()["login"] == BOT_LOGIN
    assert call(fake_github, "GET", "/user", HUMAN_TOKEN).json()["login"] == HUMAN_LOGIN
    unknown = call(fake_github, "GET", "/user", "nope")
    assert (unknown.status_code, unknown.json()["message"]) == (401, "Bad credentials")
    assert call(fake_github, "GET", "/user", None).status_code == 401
    assert call(fake_github, "GET", "/user", "app").status_code == 403

    assert call(fake_github, "GET", f"/repos/{PRIMARY}", "fuser-only").status_code == 200
    elsewhere = call(fake_github, "GET", f"/repos/{SECONDARY}/issues", "fuser-only")
    assert elsewhere.status_code == 403
    assert elsewhere.json()["message"] == "Resource not accessible by integration"
    write = call(fake_github, "POST", f"/repos/{PRIMARY}/issues", "fork-pr", json={"title": "t"})
    assert write.status_code == 403
    assert call(fake_github, "GET", f"/repos/{PRIMARY}/issues", "fork-pr").status_code == 200

    assert call(fake_github, "GET", "/repos/nobody/nothing").status_code == 404
    assert call(fake_github, "GET", f"/repos/{PRIMARY}/issues/99").status_code == 404
    assert call(fake_github, "GET", f"/repos/{PRIMARY}/issues/comments/1").status_code == 404
    issue = state.add_issue(PRIMARY, "plain issue", author=HUMAN_LOGIN)
    assert call(fake_github, "GET", f"/repos/{PRIMARY}/pulls/{issue.number}").status_code == 404
    assert call(fake_github, "GET", "/no/such/endpoint").status_code == 404
    assert not state.issues(SECONDARY)  # nothing was written by the refused requests


def test_validation_like_github(fake_github: LocalGitHub) -> None:
    path = f"/repos/{PRIMARY}/issues"
    no_title = call(fake_github, "POST", path, json={"body": "b"})
    assert no_title.status_code == 422
    assert no_title.json()["errors"][0] == {
        "resource": "Issue",
        "code": "missing_field",
        "field": "title",
    }
    assert (
        call(fake_github, "POST", path, json={"title": "t", "body": "x" * 65537}).status_code == 422
    )
    assert call(fake_github, "POST", path, data="{not json").status_code == 400
    created = call(fake_github, "POST", path, json={"title": "t", "body": "x" * 65536})
    assert created.status_code == 201
    comments = f"{path}/{created.json()['number']}/comments"
    assert call(fake_github, "POST", comments, json={}).status_code == 422
    labels = f"/repos/{PRIMARY}/labels"
    assert (
        call(fake_github, "POST", labels, json={"name": "perf", "color": "fff000"}).status_code
        == 201
    )
    duplicate = call(fake_github, "POST", labels, json={"name": "PERF", "color": "fff000"})
    assert duplicate.status_code == 422
    assert duplicate.json()["errors"][0]["code"] == "already_exists"
    assert call(fake_github, "POST", labels, json={"name": "x", "color": "red"}).status_code == 422


def test_rate_limit_headers_and_primary_limit(fake_github: LocalGitHub) -> None:
    first = call(fake_github, "GET", "/user")
    second = call(fake_github, "GET", f"/repos/{PRIMARY}")
    for response in (first, second, call(fake_github, "GET", "/repos/x/y")):
        assert {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} <= set(
            response.headers
        )
    assert (
        int(second.headers["X-RateLimit-Remaining"])
        == int(first.headers["X-RateLimit-Remaining"]) - 1
    )

    fake_github.state.set_rate_limit(BOT_LOGIN, remaining=0, reset_in=600)
    spent = call(fake_github, "GET", "/user")
    assert spent.status_code == 403
    assert spent.json()["message"].startswith("API rate limit exceeded")
    assert spent.headers["X-RateLimit-Remaining"] == "0"
    assert call(fake_github, "GET", "/user", HUMAN_TOKEN).status_code == 200  # per user


def test_fault_injection(fake_github: LocalGitHub) -> None:
    path = f"/repos/{PRIMARY}/issues"
    fault = fake_github.inject("GET", r"/issues$", 502, times=2, headers={"Retry-After": "7"})
    got = [call(fake_github, "GET", path) for _ in range(3)]
    assert [r.status_code for r in got] == [502, 502, 200]
    assert got[0].headers["Retry-After"] == "7" and "X-RateLimit-Remaining" in got[0].headers
    assert fault.hits == 2

    fake_github.inject("POST", r"/issues$", 500)  # refused before acting
    assert call(fake_github, "POST", path, json={"title": "lost"}).status_code == 500
    assert fake_github.state.issues(PRIMARY) == []
    fake_github.inject("POST", r"/issues$", 500, after_apply=True)  # acted, then failed
    assert call(fake_github, "POST", path, json={"title": "landed"}).status_code == 500
    assert [i.title for i in fake_github.state.issues(PRIMARY)] == ["landed"]

    fake_github.inject("*", r"^/user$", 404, body={"message": "custom"}, times=None)
    for method in ("GET", "PATCH"):
        assert call(fake_github, method, "/user").json() == {"message": "custom"}
    fake_github.faults.clear()
    assert call(fake_github, "GET", "/user").status_code == 200

    fake_github.inject("GET", r"^/user$", None, delay=3)
    with pytest.raises(requests.ReadTimeout):
        requests.get(
            fake_github.base_url + "/user",
            headers={"Authorization": f"token {BOT_TOKEN}"},
            timeout=0.3,
        )
    assert fake_github.requests("GET", r"^/user$")[-1].status is None  # logged, still delayed
    assert len(fake_github.requests("POST", r"/issues$")) == 2


def test_every_url_points_at_the_fake(fake_github: LocalGitHub, gh: github.Github) -> None:
    state = fake_github.state
    pr = state.add_pull_request(
        PRIMARY, "pr", author=HUMAN_LOGIN, head_ref="feature", head_repo="alice/Fuser"
    )
    comment = state.add_comment(PRIMARY, pr.number, "hi", author=HUMAN_LOGIN)
    state.add_issue(PRIMARY, "issue", author=BOT_LOGIN, labels=["perf"])
    paths = [
        "/user",
        f"/repos/{PRIMARY}",
        f"/repos/{PRIMARY}/issues?state=all",
        f"/repos/{PRIMARY}/issues/{pr.number}",
        f"/repos/{PRIMARY}/issues/{pr.number}/comments",
        f"/repos/{PRIMARY}/issues/comments/{comment.id}",
        f"/repos/{PRIMARY}/pulls/{pr.number}",
        f"/repos/{PRIMARY}/labels",
    ]
    urls: list[str] = []
    for path in paths:
        response = call(fake_github, "GET", path)
        assert response.status_code == 200, path
        urls += list(_strings_ending_in_url(response.json()))
    assert len(urls) > 40
    assert all(u.startswith(fake_github.web_url + "/") for u in urls), urls

    # PyGithub refuses foreign hosts; following every kind of URL works end to end.
    fetched = gh.get_repo(PRIMARY).get_pull(pr.number)
    assert fetched.head.ref == "feature" and fetched.head.repo.full_name == "alice/Fuser"
    issue = gh.get_repo(PRIMARY).get_issue(pr.number)
    assert [c.body for c in issue.get_comments()] == ["hi"]
    assert issue.pull_request is not None


def _strings_ending_in_url(data: Any) -> list[str]:
    if isinstance(data, dict):
        found = [v for k, v in data.items() if k.endswith("url") and isinstance(v, str)]
        return found + [u for v in data.values() for u in _strings_ending_in_url(v)]
    if isinstance(data, list):
        return [u for v in data for u in _strings_ending_in_url(v)]
    return []


def test_search_lags_behind_new_issues(fake_github: LocalGitHub) -> None:
    fake_github.state.add_issue(PRIMARY, "old regression", author=BOT_LOGIN, body="key-1")
    fake_github.state.index_search()
    fake_github.state.add_issue(PRIMARY, "new regression", author=BOT_LOGIN, body="key-2")

    def titles(q: str) -> list[str]:
        found = call(fake_github, "GET", "/search/issues", params={"q": q}).json()
        return [i["title"] for i in found["items"]]

    assert titles(f"repo:{PRIMARY} is:issue regression") == ["old regression"]
    assert titles(f"repo:{PRIMARY} key-2") == []
    fake_github.state.index_search()
    assert titles(f"repo:{PRIMARY} key-2") == ["new regression"]


def test_web_pages_escape_content(fake_github: LocalGitHub) -> None:
    pr = fake_github.state.add_pull_request(
        PRIMARY, "<script>alert(1)</script>", author=HUMAN_LOGIN, head_ref="x"
    )
    fake_github.state.add_comment(PRIMARY, pr.number, "<!-- marker --> <b>hi</b>", author=BOT_LOGIN)
    page = requests.get(f"{fake_github.web_url}/{PRIMARY}/pull/{pr.number}", timeout=5)
    assert page.status_code == 200
    assert "<script>" not in page.text and "&lt;script&gt;" in page.text
    assert "&lt;!-- marker --&gt;" in page.text
    assert (
        requests.get(f"{fake_github.web_url}/{PRIMARY}/issues/{pr.number}", timeout=5).status_code
        == 404
    )


def test_a_workflows_runs_reviews_and_compare_as_the_poster_asks(
    fake_github: LocalGitHub,
) -> None:
    """The three answers the poster's scripts read with `gh api` (post-results.yml's target
    and fresh steps) and verify-run's fork gate: filtered, ordered and shaped as GitHub's."""
    state = fake_github.state
    head, other = "b" * 40, "c" * 40
    pr = state.add_pull_request(
        PRIMARY, "Speed up", author=HUMAN_LOGIN, head_ref="f", head_sha=head
    )
    old = state.actions.add_run(PRIMARY, head_sha=head)
    new = state.actions.add_run(PRIMARY, head_sha=head)
    state.actions.add_run(PRIMARY, head_sha=other)  # another head
    state.actions.add_run(PRIMARY, head_sha=head, conclusion="failure")
    state.actions.add_run(PRIMARY, head_sha=head, path=".github/workflows/mine.yml")
    state.actions.add_run(PRIMARY, head_sha=head, event="workflow_dispatch")
    query = f"head_sha={head}&status=success&event=pull_request"
    runs = call(fake_github, "GET", f"/repos/{PRIMARY}/actions/workflows/bench-pr.yml/runs?{query}")
    assert runs.status_code == 200
    assert [r["id"] for r in runs.json()["workflow_runs"]] == [new.id, old.id]  # newest first
    assert runs.json()["total_count"] == 2

    state.pulls.review(PRIMARY, pr.number, by="alice", state="COMMENTED")
    state.pulls.review(PRIMARY, pr.number, by="bob", commit_id=other)
    reviews = call(fake_github, "GET", f"/repos/{PRIMARY}/pulls/{pr.number}/reviews").json()
    assert [(r["user"]["login"], r["state"], r["commit_id"]) for r in reviews] == [
        ("alice", "COMMENTED", head),
        ("bob", "APPROVED", other),
    ]
    assert call(fake_github, "GET", f"/repos/{PRIMARY}/pulls/999/reviews").status_code == 404

    def merge_base(base: str) -> str:
        answer = call(fake_github, "GET", f"/repos/{PRIMARY}/compare/{base}...{head}")
        return str(answer.json()["merge_base_commit"]["sha"])

    assert merge_base("a" * 40) == "0" * 40  # unrelated until the test says otherwise
    state.pulls.descend(PRIMARY, "a" * 40, head)
    assert merge_base("a" * 40) == "a" * 40
