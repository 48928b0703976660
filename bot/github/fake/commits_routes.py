"""The fake's commit endpoints over the main line of fake/commits.py.

GET  /repos/{r}/commits            the main line's commits, newest first, by since/until
GET  /repos/{r}/commits/{sha}      a commit (any 40-hex sha: one the line knows in full)
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from bot.github.fake.api import REPO_PATH, ApiError, Call, Handler, Reply, paginate
from bot.github.fake.commits import GitCommit
from bot.github.fake.state import State
from bot.github.fake.views import Json, Urls, iso, user_by_login

SHA = re.compile(r"[0-9a-f]{40}")


def parse_date(text: str | None) -> datetime | None:
    if not text:
        return None
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _commit_json(state: State, urls: Urls, repo: str, c: GitCommit, parent: str | None) -> Json:
    person = {"name": c.author_name, "email": "author@example.com", "date": iso(c.date)}
    return {
        "sha": c.sha,
        "node_id": f"C_{c.sha[:12]}",
        "url": f"{urls.api}/repos/{repo}/commits/{c.sha}",
        "html_url": f"{urls.web}/{repo}/commit/{c.sha}",
        "commit": {"message": c.message, "author": person, "committer": person},
        "author": user_by_login(state, urls, c.author_login) if c.author_login else None,
        "committer": None,
        "parents": [{"sha": parent}] if parent else [],
    }


def commits_json(state: State, urls: Urls, repo: str, commits: list[GitCommit]) -> list[Json]:
    line = [c.sha for c in state.commits.line(repo)]

    def parent(c: GitCommit) -> str | None:
        i = line.index(c.sha)
        return line[i - 1] if i > 0 else None

    return [_commit_json(state, urls, repo, c, parent(c)) for c in commits]


def path_sha(call: Call) -> str:
    """The path's commit (its third part), which must be a full 40-hex sha."""
    sha = call.params[2]
    if not SHA.fullmatch(sha):
        raise ApiError(422, "No commit found for SHA: " + sha[:50])
    return sha


def get_commit(call: Call) -> Reply:
    repo, sha = call.repo(), path_sha(call)
    known = call.state.commits.find(repo.full_name, sha)
    if known is not None:
        return Reply(200, commits_json(call.state, call.urls, repo.full_name, [known])[0])
    api = f"{call.urls.api}/repos/{repo.full_name}/commits/{sha}"
    html = f"{call.urls.web}/{repo.full_name}/commit/{sha}"
    return Reply(200, {"sha": sha, "node_id": f"C_{sha[:12]}", "url": api, "html_url": html})


def list_commits(call: Call) -> Reply:
    repo = call.repo()
    branch = call.arg("sha") or "main"
    if branch != "main":  # the fake keeps one line: the default branch's
        raise ApiError(404, f"No commit found for SHA: {branch[:50]}")
    try:
        since, until = parse_date(call.arg("since")), parse_date(call.arg("until"))
    except ValueError as exc:
        raise ApiError(422, "Validation Failed: since and until are ISO 8601 times") from exc
    page, headers = paginate(call, call.state.commits.dated(repo.full_name, since, until))
    return Reply(200, commits_json(call.state, call.urls, repo.full_name, page), headers)


COMMIT_ROUTES: list[tuple[str, str, Handler]] = [
    ("GET", REPO_PATH + r"/commits", list_commits),
    ("GET", REPO_PATH + r"/commits/([^/]+)", get_commit),
]
