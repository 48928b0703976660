"""The ``fetch-artifact`` command: download a bench run's artifacts under limits, then unpack.

Replaces actions/download-artifact in the privileged poster, because that action unpacks
whatever the zip holds. Here the listing is checked first (names, sizes, count), each download
is cut off at the size limit (the listing's size is the PR code's to choose on a forged run),
and the zip's central directory is checked whole (bot/github/trust_artifact.py) before one
file is written. Each artifact lands in DEST/<artifact-name>/. A broken rule exits 6
(UNTRUSTED) and leaves DEST without that artifact's folder; a GitHub failure exits 4.
"""

from __future__ import annotations

import functools
import io
import shutil
import zipfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import IO, TypeVar
from urllib.parse import urlsplit

import requests

from bot.commands.steps import StepFailed, step
from bot.commands.verify import connect
from bot.exitcodes import ExitCode
from bot.github.client import LOOPBACK_HOSTS, USER_AGENT, GitHubFailure, github_step
from bot.github.trust_artifact import Entry, Limits, Listed, Violation, check_entries, select
from bot.tell.log import quoted

CHUNK = 1 << 16
T = TypeVar("T")


def run_fetch_artifact(
    env: Mapping[str, str],
    out: IO[str],
    *,
    repo: str,
    run_id: int,
    prefix: str,
    dest: Path,
    limits: Limits,
    config: Path | None = None,
) -> int:
    with step("prepare the destination", ExitCode.USAGE):
        if dest.is_symlink() or (dest.exists() and (not dest.is_dir() or any(dest.iterdir()))):
            raise ValueError("--dest must be an empty folder or not exist yet")
        dest.mkdir(parents=True, exist_ok=True)
    gh, token, cfg = connect(env, config)
    if limits.max_artifacts is None:
        # The same bound `pr` holds the machines to, so a run over it is refused here, before
        # anything is downloaded, and not only later, before anything is posted.
        limits = replace(limits, max_artifacts=cfg.max_machines)
    listing_step = f"list artifacts (GET actions/runs/{run_id}/artifacts)"
    with (
        step(f"list the artifacts of run {run_id}", ExitCode.GITHUB_FAILURE),
        github_step(listing_step),
    ):
        listing = [
            Listed(a.id, a.name, a.size_in_bytes, a.expired)
            for a in gh.get_repo(repo).get_workflow_run(run_id).get_artifacts()
        ]
    chosen = _untrusted("check the artifact listing", lambda: select(listing, prefix, limits))
    session = requests.Session()
    session.headers["User-Agent"] = USER_AGENT
    for artifact in chosen:
        label = f"artifact {artifact.id}"
        with step(f"download {label}", ExitCode.GITHUB_FAILURE):
            data = _download(session, cfg.api_url, token, repo, artifact, limits, cfg.timeout_s)
        folder = dest / artifact.name
        try:
            _untrusted(f"check {label}", functools.partial(_extract, data, folder, limits))
        except StepFailed:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        out.write(f"fetched {label} as {quoted(artifact.name)}: {len(data)} bytes\n")
    out.write(f"{len(chosen)} artifact(s) passed every limit, in {quoted(str(dest))}\n")
    return ExitCode.OK_NO_REGRESSION


def _untrusted(name: str, action: Callable[[], T]) -> T:
    """Run a check; a Violation is exit 6 with its (already escaped) message."""
    try:
        return action()
    except Violation as exc:
        raise StepFailed(name, ExitCode.UNTRUSTED, str(exc)) from exc


def _download(
    session: requests.Session,
    api_url: str,
    token: str,
    repo: str,
    artifact: Listed,
    limits: Limits,
    timeout: float,
) -> bytes:
    """GET .../zip answers 302 to a signed URL: follow it by hand, without the token, and stop
    reading at the limit, whatever Content-Length says."""
    url = f"{api_url.rstrip('/')}/repos/{repo}/actions/artifacts/{artifact.id}/zip"
    step_name = f"download artifact {artifact.id} (GET actions/artifacts/{artifact.id}/zip)"
    try:
        first = session.get(
            url,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json"},
            allow_redirects=False,
            timeout=timeout,
        )
        if first.status_code != 302 or not _safe_location(first.headers.get("Location", "")):
            raise GitHubFailure(step_name, first.status_code, "no redirect to the artifact's blob")
        with session.get(
            first.headers["Location"], stream=True, timeout=timeout, allow_redirects=False
        ) as blob:
            if blob.status_code != 200:
                raise GitHubFailure(step_name, blob.status_code, "the artifact's blob")
            buffer = io.BytesIO()
            for chunk in blob.iter_content(CHUNK):
                buffer.write(chunk)
                if buffer.tell() > limits.max_bytes:
                    raise Violation(
                        f"size rule: artifact {artifact.id} is over {limits.max_bytes} bytes"
                    )
            return buffer.getvalue()
    except Violation as exc:
        raise StepFailed("download", ExitCode.UNTRUSTED, str(exc)) from exc
    except requests.RequestException as exc:
        raise GitHubFailure(step_name, None, f"connection failed: {type(exc).__name__}") from exc


def _safe_location(url: str) -> bool:
    """https anywhere (GitHub's blob hosts), plain http only to a loopback test server."""
    parts = urlsplit(url)
    return parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS)


def _extract(data: bytes, folder: Path, limits: Limits) -> None:
    """Check the central directory whole, then write each entry, never past its stated size."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, NotImplementedError, ValueError) as exc:
        raise Violation("zip rule: the artifact is not a readable zip") from exc
    with archive:
        infos = archive.infolist()
        check_entries(
            [
                Entry(i.filename, i.file_size, i.external_attr, i.create_system, i.flag_bits)
                for i in infos
            ],
            limits,
        )
        folder.mkdir()
        for info in infos:
            target = folder / info.filename
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with archive.open(info) as src, open(target, "xb") as dst:
                    shutil.copyfileobj(src, dst, CHUNK)
            except (
                zipfile.BadZipFile,
                NotImplementedError,
                OSError,
                EOFError,
                RuntimeError,  # an encrypted entry whose central directory hides the flag
                zlib.error,  # a corrupt deflate stream
            ) as exc:
                raise Violation("zip rule: an entry could not be unpacked as stated") from exc
