"""Request and reply plumbing shared by the fake's endpoints: errors, validation, paging."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar
from urllib.parse import urlencode

from bot.github.fake.state import Issue, Repo, State, Token
from bot.github.fake.views import Json, Urls

MAX_BODY = 65536
T = TypeVar("T")


class _InRepo(Protocol):
    @property
    def repo(self) -> str: ...


Owned = TypeVar("Owned", bound=_InRepo)


class ApiError(Exception):
    def __init__(self, status: int, message: str, errors: list[Json] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors

    def payload(self) -> Json:
        data: Json = {"message": self.message}
        if self.errors:
            data["errors"] = self.errors
        return data


@dataclass
class Call:
    state: State
    urls: Urls
    method: str
    path: str  # below the API prefix, e.g. /repos/o/r/issues
    origin_path: str  # as requested, for Link headers
    query: dict[str, list[str]]
    body: Any
    token: Token
    params: Sequence[str] = ()

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    def repo(self) -> Repo:
        repo = self.state.repos.get(f"{self.params[0]}/{self.params[1]}".lower())
        if repo is None:
            raise ApiError(404, "Not Found")
        return repo

    def owned(self, table: Mapping[int, Owned]) -> Owned:
        """The object the path's id names in a state-wide table (comments, runs, artifacts),
        only if it belongs to this repository: GitHub answers 404 for another's, as here."""
        item = table.get(int(self.params[2]))
        if item is None or item.repo.lower() != self.repo().full_name.lower():
            raise ApiError(404, "Not Found")
        return item

    def issue(self) -> Issue:
        issue = self.repo().issues.get(int(self.params[2]))
        if issue is None:
            raise ApiError(404, "Not Found")
        return issue


@dataclass
class Reply:
    status: int
    payload: Any
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Call], Reply]
#: The path of a repository; each route table appends its resource to it.
REPO_PATH = r"/repos/([^/]+)/([^/]+)"


def missing(resource: str, name: str) -> ApiError:
    return ApiError(
        422, "Validation Failed", [{"resource": resource, "code": "missing_field", "field": name}]
    )


def text_field(call: Call, resource: str, name: str, *, required: bool) -> str | None:
    body = call.body if isinstance(call.body, dict) else {}
    value = body.get(name)
    if value is None or value == "":
        if required:
            raise missing(resource, name)
        return None if value is None else ""
    if not isinstance(value, str):
        raise ApiError(422, f"{name} is not a string")
    if len(value) > MAX_BODY:
        raise ApiError(
            422,
            "Validation Failed",
            [
                {
                    "resource": resource,
                    "code": "custom",
                    "field": name,
                    "message": f"{name} is too long (maximum is {MAX_BODY} characters)",
                }
            ],
        )
    return value


def paginate(call: Call, items: list[T]) -> tuple[list[T], dict[str, str]]:
    """Slice one page and build GitHub's Link header (rel prev/next/last/first)."""
    try:
        per_page = min(max(int(call.arg("per_page", "30") or 30), 1), 100)
        page = max(int(call.arg("page", "1") or 1), 1)
    except ValueError as exc:
        raise ApiError(400, "Bad Request: page and per_page must be integers") from exc
    last = max(1, math.ceil(len(items) / per_page))

    def url(n: int) -> str:
        query = {k: v[-1] for k, v in call.query.items()}
        query["page"] = str(n)
        origin = call.urls.web
        return f"<{origin}{call.origin_path}?{urlencode(query)}>"

    links = []
    if page > 1:
        links.append(f'{url(min(page - 1, last))}; rel="prev"')
    if page < last:
        links += [f'{url(page + 1)}; rel="next"', f'{url(last)}; rel="last"']
    if page > 1:
        links.append(f'{url(1)}; rel="first"')
    headers = {"Link": ", ".join(links)} if links else {}
    return items[(page - 1) * per_page : page * per_page], headers
