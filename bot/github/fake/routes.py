"""The REST endpoints of the fake GitHub that the bot (through PyGithub) uses.

Each handler takes a `Call` and returns a `Reply` or raises `ApiError`; the caller holds the
state lock, so handlers are plain, single-threaded code.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

from bot.github.fake.actions_routes import ACTIONS_ROUTES
from bot.github.fake.api import (
    REPO_PATH,
    ApiError,
    Call,
    Handler,
    Reply,
    missing,
    paginate,
    text_field,
)
from bot.github.fake.commits_routes import COMMIT_ROUTES
from bot.github.fake.pulls_routes import PULL_ROUTES
from bot.github.fake.state import Issue, Repo
from bot.github.fake.views import (
    comment_json,
    issue_json,
    label_json,
    pull_json,
    repo_json,
    user_by_login,
)


def get_user(call: Call) -> Reply:
    if not call.token.can_read_user:
        raise ApiError(403, "Resource not accessible by integration")
    return Reply(200, user_by_login(call.state, call.urls, call.token.login))


def get_named_user(call: Call) -> Reply:
    if unquote(call.params[0]).lower() not in call.state.users:
        raise ApiError(404, "Not Found")
    return Reply(200, user_by_login(call.state, call.urls, unquote(call.params[0])))


def get_repo(call: Call) -> Reply:
    return Reply(200, repo_json(call.state, call.urls, call.repo()))


def get_contents(call: Call) -> Reply:
    """GET contents/{path}?ref=: a file as GitHub gives it, base64 in lines of 60."""
    repo, path = call.repo(), unquote(call.params[2])
    data = repo.files.get((call.arg("ref") or "main", path))
    if data is None:
        raise ApiError(404, "Not Found")
    text = base64.b64encode(data).decode()
    lines = "".join(text[i : i + 60] + "\n" for i in range(0, len(text), 60))
    digest = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    return Reply(
        200,
        {"type": "file", "encoding": "base64", "size": len(data), "name": path.split("/")[-1]}
        | {"path": path, "sha": digest, "content": lines},
    )


def list_issues(call: Call) -> Reply:
    repo = call.repo()
    wanted = call.arg("state", "open")
    if wanted not in ("open", "closed", "all"):
        raise ApiError(422, "Validation Failed: state must be open, closed or all")
    labels = {n.strip().lower() for n in (call.arg("labels") or "").split(",") if n.strip()}
    creator = (call.arg("creator") or "").lower()
    found = [
        i
        for i in repo.issues.values()
        if (wanted == "all" or i.state == wanted)
        and labels <= {n.lower() for n in i.labels}
        and (not creator or i.author.lower() == creator)
    ]
    sort = call.arg("sort", "created")
    key = (
        (lambda i: (i.updated_at, i.number))
        if sort == "updated"
        else (lambda i: (i.created_at, i.number))
    )
    found.sort(key=key, reverse=call.arg("direction", "desc") != "asc")
    page, headers = paginate(call, found)
    return Reply(200, [issue_json(call.state, call.urls, i) for i in page], headers)


def label_names(call: Call, repo: Repo) -> list[str]:
    raw = call.body.get("labels") if isinstance(call.body, dict) else None
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(n, str) and n for n in raw):
        raise ApiError(422, "Validation Failed: labels must be a list of names")
    return [call.state.add_label(repo.full_name, n).name for n in raw]


def create_issue(call: Call) -> Reply:
    repo = call.repo()
    title = text_field(call, "Issue", "title", required=True)
    body = text_field(call, "Issue", "body", required=False)
    assert title is not None
    issue = call.state.add_issue(
        repo.full_name, title, author=call.token.login, body=body, labels=label_names(call, repo)
    )
    return Reply(201, issue_json(call.state, call.urls, issue))


def get_issue(call: Call) -> Reply:
    return Reply(200, issue_json(call.state, call.urls, call.issue()))


def edit_issue(call: Call) -> Reply:
    issue = call.issue()
    data = call.body if isinstance(call.body, dict) else {}
    if "title" in data:
        title = text_field(call, "Issue", "title", required=True) or issue.title
        if title != issue.title:
            issue.renamed_from.append(issue.title)
        issue.title = title
    if "body" in data:
        issue.body = text_field(call, "Issue", "body", required=False)
    if "labels" in data:
        issue.labels = label_names(call, call.repo())
    if "state" in data:
        if data["state"] not in ("open", "closed"):
            raise ApiError(422, "Validation Failed: state must be open or closed")
        reason = data.get("state_reason")
        if data["state"] == "closed" and issue.state == "open":
            issue.closed_at = call.state.now()
            issue.state_reason = reason or "completed"
        elif data["state"] == "open" and issue.state == "closed":
            issue.closed_at = None
            issue.state_reason = "reopened"
        issue.state = data["state"]
    issue.updated_at = call.state.now()
    return Reply(200, issue_json(call.state, call.urls, issue))


def list_comments(call: Call) -> Reply:
    issue = call.issue()
    page, headers = paginate(call, call.state.comments_on(issue.repo, issue.number))
    return Reply(200, [comment_json(call.state, call.urls, c) for c in page], headers)


def create_comment(call: Call) -> Reply:
    issue = call.issue()
    body = text_field(call, "IssueComment", "body", required=True)
    assert body is not None
    comment = call.state.add_comment(issue.repo, issue.number, body, author=call.token.login)
    return Reply(201, comment_json(call.state, call.urls, comment))


def find_comment(call: Call) -> Any:
    return call.owned(call.state.comments)


def get_comment(call: Call) -> Reply:
    return Reply(200, comment_json(call.state, call.urls, find_comment(call)))


def edit_comment(call: Call) -> Reply:
    comment = find_comment(call)
    body = text_field(call, "IssueComment", "body", required=True)
    assert body is not None
    comment.body = body
    comment.updated_at = call.state.now()
    return Reply(200, comment_json(call.state, call.urls, comment))


def delete_comment(call: Call) -> Reply:
    del call.state.comments[find_comment(call).id]
    return Reply(204, None)


def list_labels(call: Call) -> Reply:
    repo = call.repo()
    page, headers = paginate(call, list(repo.labels.values()))
    return Reply(200, [label_json(call.urls, repo.full_name, lab) for lab in page], headers)


def create_label(call: Call) -> Reply:
    repo = call.repo()
    name = text_field(call, "Label", "name", required=True)
    assert name is not None
    color = str(call.body.get("color", "ededed")).lstrip("#")
    if not re.fullmatch(r"[0-9a-fA-F]{6}", color):
        raise ApiError(
            422, "Validation Failed", [{"resource": "Label", "code": "invalid", "field": "color"}]
        )
    if name.lower() in repo.labels:
        raise ApiError(
            422,
            "Validation Failed",
            [{"resource": "Label", "code": "already_exists", "field": "name"}],
        )
    description = text_field(call, "Label", "description", required=False) or ""
    label = call.state.add_label(repo.full_name, name, color, description)
    return Reply(201, label_json(call.urls, repo.full_name, label))


def get_label(call: Call) -> Reply:
    repo = call.repo()
    label = repo.labels.get(unquote(call.params[2]).lower())
    if label is None:
        raise ApiError(404, "Not Found")
    return Reply(200, label_json(call.urls, repo.full_name, label))


def get_pull(call: Call) -> Reply:
    issue = call.issue()
    if issue.pull is None:
        raise ApiError(404, "Not Found")
    return Reply(200, pull_json(call.state, call.urls, issue))


def search_issues(call: Call) -> Reply:
    """Search only what has been indexed (`State.index_search`): new issues stay invisible."""
    terms = (call.arg("q") or "").split()
    if not terms:
        raise missing("Search", "q")
    found = []
    for repo in call.state.repos.values():
        for issue in repo.issues.values():
            if issue.indexed and all(_search_match(issue, t) for t in terms):
                found.append(issue)
    found.sort(key=lambda i: i.id, reverse=True)
    page, headers = paginate(call, found)
    items = [issue_json(call.state, call.urls, i) for i in page]
    return Reply(
        200, {"total_count": len(found), "incomplete_results": False, "items": items}, headers
    )


def _search_match(issue: Issue, term: str) -> bool:
    qualifier, _, value = term.partition(":")
    value = value.strip('"').lower()
    if qualifier == "repo" and value:
        return issue.repo.lower() == value
    if qualifier == "label" and value:
        return value in {n.lower() for n in issue.labels}
    if qualifier in ("is", "type") and value:
        kinds = {"issue": issue.pull is None, "pr": issue.pull is not None}
        return kinds.get(value, issue.state == value)
    if qualifier == "in" and value:
        return True
    return term.strip('"').lower() in f"{issue.title}\n{issue.body or ''}".lower()


def rate_limit(call: Call) -> Reply:
    rate = call.state.rate[call.token.login.lower()]
    core = {
        "limit": 5000,
        "remaining": rate.remaining,
        "reset": rate.reset,
        "used": 5000 - rate.remaining,
    }
    search = {"limit": 30, "remaining": 30, "reset": rate.reset, "used": 0}
    return Reply(200, {"resources": {"core": core, "search": search}, "rate": core})


ROUTES: list[tuple[str, re.Pattern[str], Handler]] = [
    (method, re.compile(pattern), handler)
    for method, pattern, handler in [
        ("GET", r"/user", get_user),
        ("GET", r"/users/([^/]+)", get_named_user),
        ("GET", r"/rate_limit", rate_limit),
        ("GET", r"/search/issues", search_issues),
        ("GET", REPO_PATH, get_repo),
        ("GET", REPO_PATH + r"/contents/(.+)", get_contents),
        ("GET", REPO_PATH + r"/issues", list_issues),
        ("POST", REPO_PATH + r"/issues", create_issue),
        ("GET", REPO_PATH + r"/issues/comments/(\d+)", get_comment),
        ("PATCH", REPO_PATH + r"/issues/comments/(\d+)", edit_comment),
        ("DELETE", REPO_PATH + r"/issues/comments/(\d+)", delete_comment),
        ("GET", REPO_PATH + r"/issues/(\d+)", get_issue),
        ("PATCH", REPO_PATH + r"/issues/(\d+)", edit_issue),
        ("GET", REPO_PATH + r"/issues/(\d+)/comments", list_comments),
        ("POST", REPO_PATH + r"/issues/(\d+)/comments", create_comment),
        ("GET", REPO_PATH + r"/labels", list_labels),
        ("POST", REPO_PATH + r"/labels", create_label),
        ("GET", REPO_PATH + r"/labels/([^/]+)", get_label),
        ("GET", REPO_PATH + r"/pulls/(\d+)", get_pull),
        *ACTIONS_ROUTES,
        *COMMIT_ROUTES,
        *PULL_ROUTES,
    ]
]


def route(method: str, path: str) -> tuple[Handler, Sequence[str]]:
    for verb, pattern, handler in ROUTES:
        match = pattern.fullmatch(path)
        if match and verb == method:
            return handler, match.groups()
    raise ApiError(404, "Not Found")
