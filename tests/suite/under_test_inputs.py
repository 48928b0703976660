"""TEST INPUTS for the package-under-test tests: tiny wheels and a git repository of a one-line
``thunder`` package (not Thunder), built here, byte for byte the same every time.

One definition for every test that installs a build with real pip: tests/suite/test_under_test.py
imports it; tests/bisect/test_one_build.py and tests/workflows/test_nightly.py load it by its
path, as tests/suite is not on their import path.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import os
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_DATE = (2020, 1, 1, 0, 0, 0)


def _record_row(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel_bytes(version: str, dist: str = "lightning-thunder", body: str = "") -> bytes:
    """A pure wheel of ``dist`` at ``version`` (its METADATA's), holding ``thunder/``."""
    info = f"{dist.replace('-', '_')}-{version}.dist-info"
    files = {
        "thunder/__init__.py": f"__version__ = {version!r}\n{body}".encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: perfbot-tests\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n"
        ),
    }
    rows = [_record_row(n, b) for n, b in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(rows) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in files.items():
            zf.writestr(zipfile.ZipInfo(name, _DATE), data)
    return buf.getvalue()


def make_wheel(
    folder: Path,
    version: str,
    *,
    file_version: str | None = None,
    dist: str = "lightning-thunder",
    body: str = "",
) -> Path:
    """``folder/lightning_thunder-<file_version or version>-py3-none-any.whl``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{dist.replace('-', '_')}-{file_version or version}-py3-none-any.whl"
    path.write_bytes(wheel_bytes(version, dist, body))
    return path


@contextlib.contextmanager
def offline_env(home: Path) -> Iterator[None]:
    """No index for any pip call, and HOME at `home` (pip's cache, asv's machine file): every
    test that installs a build runs inside one."""
    home.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PIP_NO_INDEX", "1")
        mp.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        mp.setenv("HOME", str(home))
        yield


BACKEND = '''\
"""A PEP 517 backend without dependencies (TEST INPUT): packs thunder/ as a pure wheel."""
import base64, hashlib, pathlib, zipfile

DIST, VERSION = "lightning-thunder", "{version}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    info = f"lightning_thunder-{{VERSION}}.dist-info"
    files = {{p.as_posix(): p.read_bytes() for p in sorted(pathlib.Path("thunder").rglob("*.py"))}}
    meta = f"Metadata-Version: 2.1\\nName: {{DIST}}\\nVersion: {{VERSION}}\\n"
    files[f"{{info}}/METADATA"] = meta.encode()
    files[f"{{info}}/WHEEL"] = b"Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    rows = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append(f"{{name}},sha256={{digest}},{{len(data)}}")
    files[f"{{info}}/RECORD"] = ("\\n".join([*rows, f"{{info}}/RECORD,,"]) + "\\n").encode()
    out = f"lightning_thunder-{{VERSION}}-py3-none-any.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / out, "w") as zf:
        for name, data in files.items():
            zf.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)
    return out
'''


def git(repo: Path, *args: str, **env: str) -> str:
    base = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo)}
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **base, **env},
    )
    return done.stdout.strip()


#: The commit date of make_git_package's one commit.
GIT_PACKAGE_DATE = "2026-03-04T05:06:07+00:00"


def make_git_package(folder: Path, version: str = "0.3.0.dev0") -> tuple[Path, str]:
    """A pyproject-based lightning-thunder in a git repository; returns it and its commit."""
    (folder / "thunder").mkdir(parents=True)
    (folder / "thunder" / "__init__.py").write_text(f"__version__ = {version!r}\n")
    (folder / "tiny_backend.py").write_text(BACKEND.format(version=version))
    (folder / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "tiny_backend"\nbackend-path = ["."]\n\n'
        f'[project]\nname = "lightning-thunder"\nversion = "{version}"\n'
    )
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    when = GIT_PACKAGE_DATE
    git(folder, "commit", "-qm", "thunder", GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    return folder, git(folder, "rev-parse", "HEAD")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
