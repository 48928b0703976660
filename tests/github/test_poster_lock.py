"""requirements/poster.lock pins, by hash, everything the privileged poster installs, and
requirements/site.lock everything the jobs whose output is pushed or deployed install (the
nightly's merge, the website's build); no workflow installs anything else from the index."""

from __future__ import annotations

import re
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from pathlib import Path

from paths import REPO_ROOT

LOCK = REPO_ROOT / "requirements" / "poster.lock"
ENTRY = re.compile(r"^([A-Za-z0-9._-]+)==(\S+) \\\n    --hash=sha256:([0-9a-f]{64})$", re.M)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


SITE_LOCK = REPO_ROOT / "requirements" / "site.lock"
WORKFLOWS = REPO_ROOT / ".github" / "workflows"


def pinned(lock: Path = LOCK) -> dict[str, str]:
    text = lock.read_text(encoding="utf-8")
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


def _base(requirement: str) -> str:
    return _norm(re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0])


def test_the_site_lock_covers_the_runtime_dependencies_and_the_site_extra() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    locked = pinned(SITE_LOCK)
    wanted = [
        r
        for r in [
            *project["project"]["dependencies"],
            *project["project"]["optional-dependencies"]["site"],
        ]
        if "python_version < '3.11'" not in r
    ]
    for requirement in wanted:
        assert _base(requirement) in locked, f"{requirement} is not in {SITE_LOCK.name}"
    assert locked["asv"] == "0.6.6" and locked["asv-runner"] == "0.3.2"  # as the extra pins them
    assert {"setuptools", "virtualenv", "jinja2", "markupsafe"} <= set(locked)


def test_every_install_in_a_workflow_is_pinned_by_hash_or_installs_nothing_from_the_index() -> None:
    """OpenSSF Scorecard's pinned-dependencies rule: a pip install reads a lock with
    --require-hashes, or installs the checkout itself with --no-deps."""
    seen = 0
    for workflow in sorted(WORKFLOWS.glob("*.yml")):
        text = workflow.read_text(encoding="utf-8").replace("\\\n", " ")
        for line in text.splitlines():
            if "pip install" not in line or line.lstrip().startswith("#"):
                continue
            seen += 1
            hashed = "--require-hashes" in line and " -r requirements/" in line
            assert hashed or "--no-deps" in line, f"{workflow.name}: {line.strip()}"
    assert seen >= 8
