"""The fake GitHub's HTTP side: authentication, scopes, rate-limit headers, faults, routing.

The API lives under /api/v3 (the GitHub Enterprise layout), so code under test must honour a
base URL with a path prefix instead of assuming api.github.com; the web pages (`html_url`)
live at the root of the same host.
"""

from __future__ import annotations

import functools
import json
import re
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from bot.github.fake import actions_routes, web
from bot.github.fake.api import ApiError, Call, Reply
from bot.github.fake.faults import Fault, Faults
from bot.github.fake.routes import route
from bot.github.fake.state import RATE_LIMIT, RequestRecord, State, Token
from bot.github.fake.views import Urls

API_PREFIX = "/api/v3"
BOT_TOKEN, BOT_LOGIN = "bot-token", "fusion-perfbot[bot]"
HUMAN_TOKEN, HUMAN_LOGIN = "human-token", "alice"
_REPO_PATH = re.compile(r"/repos/([^/]+)/([^/]+)")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: State
    faults: Faults
    urls: Urls
    stopping: threading.Event


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as PyGithub's requests session expects
    disable_nagle_algorithm = True  # header and body go out in separate writes: no 40 ms stalls
    server: _Server
    timeout = 10  # an idle keep-alive connection ends instead of holding a thread forever

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request stderr line; the request log in State replaces it."""

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        split = urlsplit(self.path)
        if not split.path.startswith(API_PREFIX + "/"):
            data = actions_routes.blob(self.server.state, split.path) if method == "GET" else None
            if data is not None:
                self._send_blob(data)
                return
            page = web.render(self.server.state, split.path) if method == "GET" else None
            self._send_html(page)
            return
        path = split.path[len(API_PREFIX) :]
        query = parse_qs(split.query, keep_blank_values=True)
        state, faults = self.server.state, self.server.faults
        record = RequestRecord(method, path, query)
        state.log(record)
        fault = faults.take(method, path)
        if fault and fault.delay:
            self.server.stopping.wait(fault.delay)
        with state.lock:
            reply = self._answer(method, path, split.path, query, raw, record, fault)
            record.status = reply.status
        if fault:
            # Answered, not yet sent: no party can act on its answer (and write) before every
            # party has one, so all of them saw the state from before any of their writes.
            fault.hold()
        self._send_json(reply)

    def _answer(
        self,
        method: str,
        path: str,
        origin_path: str,
        query: dict[str, list[str]],
        raw: bytes,
        record: RequestRecord,
        fault: Fault | None,
    ) -> Reply:
        state = self.server.state
        token = self._token()
        if token is None:
            message = (
                "Bad credentials"
                if self.headers.get("Authorization")
                else "Requires authentication"
            )
            return Reply(401, {"message": message})
        record.login = token.login
        rate = state.rate[token.login.lower()]
        if rate.remaining <= 0:
            user = state.users[token.login.lower()]
            message = f"API rate limit exceeded for user ID {user.id}."
            return Reply(403, {"message": message}, self._rate_headers(token))
        if path != "/rate_limit":
            rate.remaining -= 1
        headers = self._rate_headers(token)
        if fault and fault.status is not None and not fault.after_apply:
            return _fault_reply(fault, Reply(0, None, headers))
        try:
            self._authorize(token, method, path)
            handler, params = route(method, path)
            body = json.loads(raw) if raw else None
            call = Call(
                state, self.server.urls, method, path, origin_path, query, body, token, params
            )
            reply = handler(call)
        except json.JSONDecodeError:
            reply = Reply(400, {"message": "Problems parsing JSON"})
        except ApiError as err:
            reply = Reply(err.status, err.payload())
        reply.headers = {**headers, **reply.headers}
        return _fault_reply(fault, reply) if fault and fault.status is not None else reply

    def _rate_headers(self, token: Token) -> dict[str, str]:
        """The X-RateLimit-* headers GitHub sends on every API answer."""
        rate = self.server.state.rate[token.login.lower()]
        return {
            "X-RateLimit-Limit": str(RATE_LIMIT),
            "X-RateLimit-Remaining": str(rate.remaining),
            "X-RateLimit-Reset": str(rate.reset),
            "X-RateLimit-Used": str(RATE_LIMIT - rate.remaining),
            "X-RateLimit-Resource": "core",
        }

    def _token(self) -> Token | None:
        auth = self.headers.get("Authorization") or ""
        scheme, _, value = auth.partition(" ")
        if scheme.lower() not in ("token", "bearer"):
            return None
        return self.server.state.tokens.get(value.strip())

    @staticmethod
    def _authorize(token: Token, method: str, path: str) -> None:
        match = _REPO_PATH.match(path)
        scope = token.repos
        if match and scope is not None and f"{match[1]}/{match[2]}".lower() not in scope:
            raise ApiError(403, "Resource not accessible by integration")
        if token.read_only and method != "GET":
            raise ApiError(403, "Resource not accessible by integration")

    def _send_json(self, reply: Reply) -> None:
        data = b"" if reply.payload is None else json.dumps(reply.payload).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-GitHub-Request-Id", uuid.uuid4().hex[:16].upper())
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self._finish(data)

    def _send_blob(self, data: bytes) -> None:
        """An artifact's zip at its signed URL: no token asked for, as on GitHub's blob host."""
        self.send_response(200)
        self.send_header("Content-Type", "application/zip")
        self.send_header("Content-Length", str(len(data)))
        self._finish(data)

    def _send_html(self, page: str | None) -> None:
        data = (page or "<!doctype html><title>Not Found</title><p>Not Found</p>").encode()
        self.send_response(200 if page else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
        self.send_header("Content-Length", str(len(data)))
        self._finish(data)

    def _finish(self, data: bytes) -> None:
        try:
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test); GitHub would not notice either


def _fault_reply(fault: Fault, normal: Reply) -> Reply:
    """The injected answer; it keeps the rate-limit headers unless the fault sets its own."""
    assert fault.status is not None
    return Reply(fault.status, fault.payload(), {**normal.headers, **fault.headers})


class LocalGitHub:
    """A running fake GitHub. Use `state` to seed and inspect, `inject` to misbehave."""

    def __init__(self, server: _Server, thread: threading.Thread) -> None:
        self._server = server
        self._thread = thread
        self.state = server.state
        self.faults = server.faults
        self.base_url = server.urls.api
        self.web_url = server.urls.web

    def inject(
        self,
        method: str,
        path_regex: str,
        status: int | None,
        *,
        times: int | None = 1,
        headers: dict[str, str] | None = None,
        body: Any = None,
        delay: float = 0.0,
        after_apply: bool = False,
    ) -> Fault:
        """Make the next `times` matching requests fail with `status` (None: only delay them).

        `path_regex` is searched in the API path without the /api/v3 prefix, e.g.
        r"/repos/NVIDIA/Fuser/issues$". `method` "*" matches every method.
        """
        pattern = re.compile(path_regex)
        fault = Fault(
            method.upper(), pattern, status, times, dict(headers or {}), body, delay, after_apply
        )
        return self.faults.add(fault)

    def rendezvous(
        self, method: str, path_regex: str, parties: int = 2, *, timeout: float = 10.0
    ) -> Fault:
        """Hold the answers to the next `parties` matching requests until all have arrived:
        each is answered on arrival but sent only then, so no client can write before all of
        them have read. Two clients that both list before either creates, every time.
        """
        fault = Fault(method.upper(), re.compile(path_regex), None, parties)
        fault.barrier = threading.Barrier(parties)
        fault.barrier_timeout = timeout
        return self.faults.add(fault)

    def requests(
        self, method: str | None = None, path_regex: str | None = None
    ) -> list[RequestRecord]:
        """The request log, filtered; records appear when a request arrives."""
        with self.state.lock:
            return [
                r
                for r in self.state.requests
                if (method is None or r.method == method)
                and (path_regex is None or re.search(path_regex, r.path))
            ]

    def wait_for_request(
        self, method: str, path_regex: str, timeout: float = 10.0
    ) -> RequestRecord:
        with self.state.arrived:
            ok = self.state.arrived.wait_for(
                lambda: bool(self.requests(method, path_regex)), timeout
            )
            if not ok:
                raise TimeoutError(f"no {method} {path_regex} within {timeout}s")
            return self.requests(method, path_regex)[0]

    def stop(self) -> None:
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LocalGitHub:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def start_server(*, host: str = "127.0.0.1", port: int = 0, seed_users: bool = True) -> LocalGitHub:
    """Start the fake on a background thread; port 0 picks a free port.

    `seed_users` adds the bot (token "bot-token", login "fusion-perfbot[bot]") and a human
    (token "human-token", login "alice"); repositories are seeded by the caller.
    """
    server = _Server((host, port), _Handler)
    server.state = State()
    server.faults = Faults()
    server.stopping = threading.Event()
    bound_port = server.server_address[1]
    web_url = f"http://{host}:{bound_port}"
    server.urls = Urls(api=web_url + API_PREFIX, web=web_url)
    if seed_users:
        server.state.add_user(BOT_LOGIN, token=BOT_TOKEN, type="Bot")
        server.state.add_user(HUMAN_LOGIN, token=HUMAN_TOKEN)
    # A short poll interval lets stop() return at once instead of after up to half a second.
    serve = functools.partial(server.serve_forever, poll_interval=0.02)
    thread = threading.Thread(target=serve, name="localgithub", daemon=True)
    thread.start()
    return LocalGitHub(server, thread)
