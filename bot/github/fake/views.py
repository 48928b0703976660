"""GitHub-shaped JSON for the fake's objects.

Every URL points back at the fake's own host: PyGithub follows `url` fields and `Link`
headers and refuses hosts other than its base URL. Every field that the bot reads from a
listing is always present (null when empty): PyGithub fetches the whole object again when a
listed object lacks an attribute that code touches, which would hide extra requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from bot.github.fake.state import Comment, Issue, Label, Repo, State, User

Json = dict[str, Any]


@dataclass(frozen=True)
class Urls:
    api: str  # e.g. http://127.0.0.1:PORT/api/v3
    web: str  # e.g. http://127.0.0.1:PORT


def iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def user_json(urls: Urls, user: User) -> Json:
    login = quote(user.login, safe="")
    return {
        "login": user.login,
        "id": user.id,
        "node_id": f"U_{user.id}",
        "type": user.type,
        "site_admin": False,
        "url": f"{urls.api}/users/{login}",
        "html_url": f"{urls.web}/{login}",
    }


def user_by_login(state: State, urls: Urls, login: str) -> Json:
    user = state.users.get(login.lower()) or User(login, 0)
    return user_json(urls, user)


def repo_json(state: State, urls: Urls, repo: Repo) -> Json:
    api = f"{urls.api}/repos/{repo.full_name}"
    return {
        "id": repo.id,
        "node_id": f"R_{repo.id}",
        "name": repo.name,
        "full_name": repo.full_name,
        "owner": user_by_login(state, urls, repo.owner),
        "private": False,
        "fork": False,
        "html_url": f"{urls.web}/{repo.full_name}",
        "url": api,
        "issues_url": f"{api}/issues{{/number}}",
        "labels_url": f"{api}/labels{{/name}}",
        "pulls_url": f"{api}/pulls{{/number}}",
        "default_branch": "main",
        "has_issues": True,
        "open_issues_count": sum(1 for i in repo.issues.values() if i.state == "open"),
    }


def label_json(urls: Urls, repo: str, label: Label) -> Json:
    return {
        "id": label.id,
        "node_id": f"LA_{label.id}",
        "name": label.name,
        "color": label.color,
        "description": label.description,
        "default": False,
        "url": f"{urls.api}/repos/{repo}/labels/{quote(label.name, safe='')}",
    }


def issue_json(state: State, urls: Urls, issue: Issue) -> Json:
    api = f"{urls.api}/repos/{issue.repo}/issues/{issue.number}"
    kind = "pull" if issue.pull else "issues"
    repo = state.repo(issue.repo)
    comments = sum(
        1
        for c in state.comments.values()
        if c.repo == issue.repo and c.issue_number == issue.number
    )
    data: Json = {
        "id": issue.id,
        "node_id": f"I_{issue.id}",
        "number": issue.number,
        "title": issue.title,
        "body": issue.body,
        "user": user_by_login(state, urls, issue.author),
        "labels": [label_json(urls, issue.repo, repo.labels[n.lower()]) for n in issue.labels],
        "state": issue.state,
        "state_reason": issue.state_reason,
        "locked": False,
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "comments": comments,
        "author_association": state.pulls.association_of(issue.repo, issue.author),
        "created_at": iso(issue.created_at),
        "updated_at": iso(issue.updated_at),
        "closed_at": iso(issue.closed_at),
        "url": api,
        "repository_url": f"{urls.api}/repos/{issue.repo}",
        "comments_url": f"{api}/comments",
        "labels_url": f"{api}/labels{{/name}}",
        "html_url": f"{urls.web}/{issue.repo}/{kind}/{issue.number}",
    }
    if issue.pull:
        pulls = f"{urls.api}/repos/{issue.repo}/pulls/{issue.number}"
        data["pull_request"] = {
            "url": pulls,
            "html_url": data["html_url"],
            "diff_url": f"{data['html_url']}.diff",
            "patch_url": f"{data['html_url']}.patch",
            "merged_at": iso(issue.closed_at) if issue.pull.merged else None,
        }
    return data


def pull_json(state: State, urls: Urls, issue: Issue) -> Json:
    assert issue.pull is not None
    pull = issue.pull
    base = issue_json(state, urls, issue)
    api = f"{urls.api}/repos/{issue.repo}/pulls/{issue.number}"

    def ref(name: str, sha: str, repo_name: str) -> Json:
        known = state.repos.get(repo_name.lower())
        repo = repo_json(state, urls, known or Repo(0, repo_name))
        owner = repo_name.split("/", 1)[0]
        return {
            "label": f"{owner}:{name}",
            "ref": name,
            "sha": sha,
            "repo": repo,
            "user": user_by_login(state, urls, owner),
        }

    return {
        **{k: base[k] for k in ("id", "number", "title", "body", "user", "labels", "state")},
        **{k: base[k] for k in ("created_at", "updated_at", "closed_at", "html_url")},
        "node_id": f"PR_{issue.id}",
        "url": api,
        "issue_url": base["url"],
        "comments_url": base["comments_url"],
        "head": ref(pull.head_ref, pull.head_sha, pull.head_repo),
        "base": ref(pull.base_ref, "1" * 40, issue.repo),
        "draft": False,
        "merged": pull.merged,
        "merged_at": iso(issue.closed_at) if pull.merged else None,
        "mergeable": None,
    }


def comment_json(state: State, urls: Urls, comment: Comment) -> Json:
    issue = state.repo(comment.repo).issues[comment.issue_number]
    kind = "pull" if issue.pull else "issues"
    return {
        "id": comment.id,
        "node_id": f"IC_{comment.id}",
        "body": comment.body,
        "user": user_by_login(state, urls, comment.author),
        "author_association": state.pulls.association_of(comment.repo, comment.author),
        "created_at": iso(comment.created_at),
        "updated_at": iso(comment.updated_at),
        "url": f"{urls.api}/repos/{comment.repo}/issues/comments/{comment.id}",
        "issue_url": f"{urls.api}/repos/{comment.repo}/issues/{comment.issue_number}",
        "html_url": (
            f"{urls.web}/{comment.repo}/{kind}/{comment.issue_number}#issuecomment-{comment.id}"
        ),
    }
