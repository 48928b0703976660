"""``site serve``: the built site over HTTP on this machine (loopback by default).

The standard library's static file server, restricted to the site folder, with the content
types asv's files need (Atom feed, JSON) and no directory listings. :func:`start_server`
runs it on a thread for tests and previews; :func:`serve_site` blocks until Ctrl-C.
"""

from __future__ import annotations

import functools
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bot.config import ConfigError
from bot.site.build import SiteReport, build_site


class _Handler(SimpleHTTPRequestHandler):
    extensions_map = {  # noqa: RUF012 - the base class declares it a plain attribute
        **SimpleHTTPRequestHandler.extensions_map,
        ".json": "application/json",
        ".xml": "application/atom+xml",
        ".js": "text/javascript",
        ".css": "text/css",
        ".woff": "font/woff",
        ".ico": "image/x-icon",
    }

    def list_directory(self, path: Any) -> None:
        self.send_error(404, "no directory listings")
        return None

    def end_headers(self) -> None:
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:  # type: ignore[attr-defined]
            sys.stderr.write(f"site: {self.address_string()} {format % args}\n")


@dataclass
class RunningSite:
    server: ThreadingHTTPServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        host, port = (str(x) for x in self.server.server_address[:2])
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}"


def _bind(site_dir: Path, host: str, port: int, verbose: bool) -> ThreadingHTTPServer:
    """Listen on host:port for `site_dir` (which may not exist yet); a port that cannot be had
    is a usage error that names it."""
    handler = functools.partial(_Handler, directory=str(site_dir.resolve()))
    try:
        server = ThreadingHTTPServer((host, port), handler)
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise ConfigError(
            f"cannot listen on {host}:{port}: {why} (choose another --port, or 0 for any free one)"
        ) from None
    server.verbose = verbose  # type: ignore[attr-defined]
    server.daemon_threads = True
    return server


def _server(site_dir: Path, host: str, port: int, verbose: bool) -> ThreadingHTTPServer:
    if not (site_dir / "index.html").is_file():
        raise FileNotFoundError(f"{site_dir}: no index.html (build the site first)")
    return _bind(site_dir, host, port, verbose)


@contextmanager
def start_server(
    site_dir: Path, host: str = "127.0.0.1", port: int = 0, *, verbose: bool = False
) -> Iterator[RunningSite]:
    """Serve ``site_dir`` on a background thread (port 0: an ephemeral port) until exit."""
    server = _server(site_dir, host, port, verbose)
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    try:
        yield RunningSite(server, thread)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def serve_site(site_dir: Path, host: str = "127.0.0.1", port: int = 0) -> None:
    """Serve ``site_dir`` in the foreground until interrupted; prints the URL first."""
    _serve_until_interrupted(_server(site_dir, host, port, verbose=True), site_dir)


def _serve_until_interrupted(server: ThreadingHTTPServer, site_dir: Path) -> None:
    main = threading.current_thread() is threading.main_thread()
    # SIGTERM (a CI step's timeout, `kill`) stops it like Ctrl-C, so callers clean up.
    previous = signal.signal(signal.SIGTERM, _interrupt) if main else None
    with server:
        host_, port_ = (str(x) for x in server.server_address[:2])
        print(f"site: serving {site_dir} at http://{host_}:{port_}/ (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("site: stopped", file=sys.stderr)
        finally:
            if main:
                signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def serve_results(
    results: Path | Sequence[Path],
    *,
    conf_path: Path = Path("asv.conf.json"),
    host: str = "127.0.0.1",
    port: int = 0,
    config_path: Path | None = None,
    history_json: Path | None = None,
) -> SiteReport:
    """Build the site into a temporary folder and serve it until interrupted.

    The port is taken first: a busy or forbidden port fails at once, naming it, instead of
    after a whole build.
    """
    with tempfile.TemporaryDirectory(prefix="perfbot-site-") as tmp:
        site_dir = Path(tmp) / "site"
        server = _bind(site_dir, host, port, verbose=True)
        try:
            report = build_site(
                results,
                site_dir,
                conf_path=conf_path,
                config_path=config_path,
                history_json=history_json,
            )
        except BaseException:
            server.server_close()
            raise
        for line in report.lines():
            print(line, flush=True)
        _serve_until_interrupted(server, report.out_dir)
    return report
