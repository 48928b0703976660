"""The fake's Actions endpoints, and the two issue-side ones the poster's checks read.

    GET /repos/{r}/actions/runs/{id}                    a workflow run
    GET /repos/{r}/actions/runs/{id}/artifacts          its artifacts (paged)
    GET /repos/{r}/actions/artifacts/{id}/zip           302 to the blob (as on GitHub)
    GET /repos/{r}/issues/{n}/events                    issue events (paged)
    GET /repos/{r}/collaborators/{user}/permission      a user's role

The zip download answers with a redirect to an unauthenticated blob URL on the fake's web
root, as GitHub redirects to a short-lived signed URL on another host: a client that follows
it must not need (or send) its token there. Every URL points back at the fake.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from bot.github.fake.actions import Artifact, IssueEvent, WorkflowRun
from bot.github.fake.api import REPO_PATH, ApiError, Call, Handler, Reply, paginate
from bot.github.fake.state import Repo, State
from bot.github.fake.views import Json, Urls, iso, repo_json, user_by_login

BLOB = re.compile(r"/_blobs/artifacts/(\d+)/([A-Za-z0-9]+)\.zip")


def _repo_json(state: State, urls: Urls, name: str | None) -> Json | None:
    if name is None:
        return None
    return repo_json(state, urls, state.repos.get(name.lower()) or Repo(0, name))


def run_json(state: State, urls: Urls, run: WorkflowRun) -> Json:
    api = f"{urls.api}/repos/{run.repo}/actions/runs/{run.id}"
    same_repo = run.head_repo is not None and run.head_repo.lower() == run.repo.lower()
    pulls = [
        {"number": i.number, "url": f"{urls.api}/repos/{run.repo}/pulls/{i.number}"}
        for i in state.repo(run.repo).issues.values()
        if same_repo and i.pull is not None and i.pull.head_sha == run.head_sha
    ]  # GitHub leaves this empty for a fork's head: the poster must not rely on it
    return {
        "id": run.id,
        "node_id": f"WFR_{run.id}",
        "name": run.name,
        "display_title": run.name,
        "path": run.path,
        "event": run.event,
        "status": run.status,
        "conclusion": run.conclusion,
        "head_sha": run.head_sha,
        "head_branch": run.head_branch,
        "run_attempt": run.run_attempt,
        "run_number": run.id,
        "pull_requests": pulls,
        "created_at": iso(run.created_at),
        "updated_at": iso(run.created_at),
        "run_started_at": iso(run.created_at),
        "actor": user_by_login(state, urls, run.triggering_actor),
        "triggering_actor": user_by_login(state, urls, run.triggering_actor),
        "repository": _repo_json(state, urls, run.repo),
        "head_repository": _repo_json(state, urls, run.head_repo),
        "url": api,
        "html_url": f"{urls.web}/{run.repo}/actions/runs/{run.id}",
        "artifacts_url": f"{api}/artifacts",
        "jobs_url": f"{api}/jobs",
        "logs_url": f"{api}/logs",
    }


def artifact_json(urls: Urls, artifact: Artifact) -> Json:
    api = f"{urls.api}/repos/{artifact.repo}/actions/artifacts/{artifact.id}"
    size = artifact.size_in_bytes
    return {
        "id": artifact.id,
        "node_id": f"MDg6QXJ0aWZhY3Q{artifact.id}",
        "name": artifact.name,
        "size_in_bytes": len(artifact.payload) if size is None else size,
        "url": api,
        "archive_download_url": f"{api}/zip",
        "expired": artifact.expired,
        "created_at": None,
        "updated_at": None,
        "expires_at": None,
        "workflow_run": {"id": artifact.run_id},
    }


def event_json(state: State, urls: Urls, event: IssueEvent) -> Json:
    data: Json = {
        "id": event.id,
        "node_id": f"LE_{event.id}",
        "url": f"{urls.api}/repos/{event.repo}/issues/events/{event.id}",
        "actor": user_by_login(state, urls, event.actor),
        "event": event.event,
        "commit_id": None,
        "commit_url": None,
        "created_at": iso(event.created_at),
        "performed_via_github_app": None,
    }
    if event.label is not None:
        repo = state.repo(event.repo)
        known = repo.labels.get(event.label.lower())
        data["label"] = (
            {"name": known.name, "color": known.color}
            if known
            else {"name": event.label, "color": "ededed"}
        )
    return data


def _run(call: Call) -> WorkflowRun:
    return call.owned(call.state.actions.runs)


def get_run(call: Call) -> Reply:
    return Reply(200, run_json(call.state, call.urls, _run(call)))


def list_workflow_runs(call: Call) -> Reply:
    """GET actions/workflows/{file}/runs, with GitHub's head_sha, event and status filters
    (status=success matches the conclusion, as on GitHub); newest first."""
    repo, file = call.repo(), call.params[2]
    head, event, status = call.arg("head_sha"), call.arg("event"), call.arg("status")
    found = [
        r
        for r in call.state.actions.runs.values()
        if r.repo.lower() == repo.full_name.lower()
        and r.path.rsplit("/", 1)[-1] == file
        and (head is None or r.head_sha == head)
        and (event is None or r.event == event)
        and (status is None or status in (r.status, r.conclusion))
    ]
    found.sort(key=lambda r: (r.created_at, r.id), reverse=True)
    page, headers = paginate(call, found)
    items = [run_json(call.state, call.urls, r) for r in page]
    return Reply(200, {"total_count": len(found), "workflow_runs": items}, headers)


def list_run_artifacts(call: Call) -> Reply:
    run = _run(call)
    found = sorted(
        (a for a in call.state.actions.artifacts.values() if a.run_id == run.id),
        key=lambda a: a.id,
    )
    page, headers = paginate(call, found)
    items = [artifact_json(call.urls, a) for a in page]
    return Reply(200, {"total_count": len(found), "artifacts": items}, headers)


def download_artifact(call: Call) -> Reply:
    artifact = call.owned(call.state.actions.artifacts)
    if artifact.expired:
        raise ApiError(410, "Artifact has expired")
    blob = f"{call.urls.web}/_blobs/artifacts/{artifact.id}/{artifact.blob_key}.zip"
    return Reply(302, None, {"Location": blob})


def blob(state: State, path: str) -> bytes | None:
    """The bytes behind a blob URL (no token: the URL is the secret), or None (404)."""
    match = BLOB.fullmatch(path)
    if match is None:
        return None
    with state.lock:
        artifact = state.actions.artifacts.get(int(match[1]))
        if artifact is None or artifact.blob_key != match[2]:
            return None
        return artifact.payload


def list_issue_events(call: Call) -> Reply:
    issue = call.issue()
    page, headers = paginate(call, call.state.actions.events_on(issue.repo, issue.number))
    return Reply(200, [event_json(call.state, call.urls, e) for e in page], headers)


#: What GitHub's legacy `permission` field says for each role (maintain reads as write).
_PERMISSION = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read"}


def get_permission(call: Call) -> Reply:
    repo = call.repo()
    login = unquote(call.params[2])
    if login.lower() not in call.state.users:
        raise ApiError(404, "Not Found")
    # A public repository: everyone may read, so a user without a role reads as "read".
    role = call.state.actions.roles.get((repo.full_name.lower(), login.lower()), "read")
    payload = {
        "permission": _PERMISSION.get(role, "read"),
        "role_name": role,
        "user": user_by_login(call.state, call.urls, login),
    }
    return Reply(200, payload)


ACTIONS_ROUTES: list[tuple[str, str, Handler]] = [
    ("GET", REPO_PATH + r"/actions/runs/(\d+)", get_run),
    ("GET", REPO_PATH + r"/actions/workflows/([A-Za-z0-9._-]+)/runs", list_workflow_runs),
    ("GET", REPO_PATH + r"/actions/runs/(\d+)/artifacts", list_run_artifacts),
    ("GET", REPO_PATH + r"/actions/artifacts/(\d+)/zip", download_artifact),
    ("GET", REPO_PATH + r"/issues/(\d+)/events", list_issue_events),
    ("GET", REPO_PATH + r"/collaborators/([^/]+)/permission", get_permission),
]
