"""requirements/poster.lock pins, by hash, everything the privileged poster installs."""

from __future__ import annotations

import re
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from paths import REPO_ROOT

LOCK = REPO_ROOT / "requirements" / "poster.lock"
ENTRY = re.compile(r"^([A-Za-z0-9._-]+)==(\S+) \\\n    --hash=sha256:([0-9a-f]{64})$", re.M)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned() -> dict[str, str]:
    text = LOCK.read_text(encoding="utf-8")
    found = {_norm(m[1]): m[2] for m in ENTRY.finditer(text)}
    requirement_lines = [
        line for line in text.splitlines() if line and not line.startswith((" ", "#"))
    ]
    assert len(requirement_lines) == len(found), "every requirement has exactly one hash line"
    return found


def test_the_lock_covers_every_runtime_dependency() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    locked = pinned()
    for requirement in project["project"]["dependencies"]:
        name, _, marker = requirement.partition(";")
        if "python_version < '3.11'" in marker:
            continue  # the poster runs CPython 3.11
        base = _norm(re.split(r"[<>=!~\[ ]", name.strip(), maxsplit=1)[0])
        assert base in locked, f"{base} is a runtime dependency but not in {LOCK.name}"


def test_the_lock_holds_pygithubs_closure_and_the_build_backend() -> None:
    closure = {"pygithub", "pyjwt", "pynacl", "requests", "typing-extensions", "urllib3"}
    closure |= {"certifi", "charset-normalizer", "idna", "cryptography", "cffi", "pycparser"}
    assert closure | {"numpy", "setuptools"} <= set(pinned())
