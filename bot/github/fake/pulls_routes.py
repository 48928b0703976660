"""The fake's pull-request endpoints (the state: fake/pulls.py).

POST /repos/{r}/statuses/{sha}            set a commit status
GET  /repos/{r}/commits/{sha}/statuses    the statuses of a commit, newest first
GET  /repos/{r}/pulls/{n}/reviews         a PR's reviews, oldest first
GET  /repos/{r}/compare/{base}...{head}   the merge base (what fake.pulls.descend said, or
                                          the main line of fake/commits.py, with its commits)
"""

from __future__ import annotations

from bot.github.fake.api import REPO_PATH, ApiError, Call, Handler, Reply, paginate, text_field
from bot.github.fake.commits_routes import SHA, commits_json, path_sha
from bot.github.fake.pulls import STATES, CommitStatus, Review
from bot.github.fake.state import State
from bot.github.fake.views import Json, Urls, iso, user_by_login


def status_json(state: State, urls: Urls, status: CommitStatus) -> Json:
    return {
        "id": status.id,
        "node_id": f"SC_{status.id}",
        "state": status.state,
        "description": status.description,
        "context": status.context,
        "target_url": status.target_url,
        "creator": user_by_login(state, urls, status.creator),
        "created_at": iso(status.created_at),
        "updated_at": iso(status.created_at),
        "url": f"{urls.api}/repos/{status.repo}/statuses/{status.sha}",
    }


def create_status(call: Call) -> Reply:
    repo, sha = call.repo(), path_sha(call)
    wanted = call.body.get("state") if isinstance(call.body, dict) else None
    if wanted not in STATES:
        raise ApiError(422, f"Validation Failed: state must be one of {', '.join(STATES)}")
    description = text_field(call, "Status", "description", required=False)
    if description is not None and len(description) > 140:
        raise ApiError(422, "Validation Failed: description is too long (maximum is 140)")
    status = CommitStatus(
        call.state.new_id(),
        repo.full_name,
        sha,
        str(wanted),
        description,
        text_field(call, "Status", "context", required=False) or "default",
        text_field(call, "Status", "target_url", required=False),
        call.token.login,
        call.state.now(),
    )
    call.state.pulls.statuses.append(status)
    return Reply(201, status_json(call.state, call.urls, status))


def list_statuses(call: Call) -> Reply:
    repo, sha = call.repo(), path_sha(call)
    page, headers = paginate(call, call.state.pulls.of(repo.full_name, sha))
    return Reply(200, [status_json(call.state, call.urls, s) for s in page], headers)


def review_json(call: Call, review: Review) -> Json:
    pull = f"{call.urls.api}/repos/{review.repo}/pulls/{review.number}"
    return {
        "id": review.id,
        "node_id": f"PRR_{review.id}",
        "user": user_by_login(call.state, call.urls, review.reviewer),
        "body": "",
        "state": review.state,
        "html_url": f"{call.urls.web}/{review.repo}/pull/{review.number}"
        f"#pullrequestreview-{review.id}",
        "pull_request_url": pull,
        "submitted_at": iso(review.submitted_at),
        "commit_id": review.commit_id,
        "author_association": call.state.pulls.association_of(review.repo, review.reviewer),
    }


def list_reviews(call: Call) -> Reply:
    issue = call.issue()
    if issue.pull is None:
        raise ApiError(404, "Not Found")
    page, headers = paginate(call, call.state.pulls.reviews_of(issue.repo, issue.number))
    return Reply(200, [review_json(call, r) for r in page], headers)


def compare(call: Call) -> Reply:
    repo, base, head = call.repo(), call.params[2], call.params[3]
    for sha in (base, head):
        if not SHA.fullmatch(sha):
            raise ApiError(404, "Not Found")
    line = call.state.commits.between(repo.full_name, base, head)
    pulls = call.state.pulls
    merge_base = base if line is not None else pulls.merge_base(repo.full_name, base, head)
    api = f"{call.urls.api}/repos/{repo.full_name}/compare/{base}...{head}"
    status = "diverged" if merge_base != base else "identical" if base == head else "ahead"
    shown = commits_json(call.state, call.urls, repo.full_name, (line or [])[:250])
    return Reply(
        200,
        {
            "url": api,
            "html_url": f"{call.urls.web}/{repo.full_name}/compare/{base}...{head}",
            "status": status,
            "ahead_by": len(line or []),
            "behind_by": 0,
            "total_commits": len(line or []),
            "merge_base_commit": {"sha": merge_base},
            "base_commit": {"sha": base},
            "commits": shown,
            "files": [],
        },
    )


PULL_ROUTES: list[tuple[str, str, Handler]] = [
    ("POST", REPO_PATH + r"/statuses/([^/]+)", create_status),
    ("GET", REPO_PATH + r"/commits/([^/]+)/statuses", list_statuses),
    ("GET", REPO_PATH + r"/statuses/([^/]+)", list_statuses),
    ("GET", REPO_PATH + r"/pulls/(\d+)/reviews", list_reviews),
    ("GET", REPO_PATH + r"/compare/([^/.]+)\.\.\.([^/.]+)", compare),
]
