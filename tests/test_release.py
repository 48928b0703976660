"""The release procedure (scripts/release.py, docs/RELEASE.md), run for real on a throwaway
clone of this repository: the two commits, the tag, the pins it moves, and the pins it refuses.
And the committed pin itself: a commit of this repository's history, on its main line, whose
reusable workflows declare every input and secret the examples pass."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from paths import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "release.py"
sys.path.insert(0, str(SCRIPT.parent))
import release  # noqa: E402
import release_files  # noqa: E402

V010 = "b1a1d252598c06b086dd1239ad556a6c178a7648"  # v0.1.0: no config-path in post-results.yml


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _release(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root), *args],
        capture_output=True,
        text=True,
    )


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This repository's main as committed, cloned; something said under Unreleased."""
    root = tmp_path_factory.mktemp("release") / "fusion-perfbot"
    subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(root)], check=True)
    _git(root, "checkout", "-q", "-B", "main")
    _git(root, "config", "user.name", "Release Test")
    _git(root, "config", "user.email", "release@example.invalid")
    changelog = root / "CHANGELOG.md"
    text = changelog.read_text(encoding="utf-8")
    changelog.write_text(text.replace("## Unreleased\n", "## Unreleased\n\n- A fix.\n", 1))
    _git(root, "commit", "-qam", "A change to release")
    return root


def test_a_release_is_two_commits_and_a_tag_and_every_pin_moves(clone: Path) -> None:
    before = _git(clone, "rev-parse", "HEAD")
    dry = _release(clone, "--dry-run", "both", "9.9.9", "--date", "2030-01-02")
    assert dry.returncode == 0, dry.stderr
    assert "would write CHANGELOG.md" in dry.stdout and "would commit" in dry.stdout
    assert _git(clone, "rev-parse", "HEAD") == before and not _git(clone, "status", "--short")

    done = _release(clone, "both", "9.9.9", "--date", "2030-01-02")
    assert done.returncode == 0, done.stderr
    subjects = _git(clone, "log", "-2", "--format=%s").splitlines()
    tagged = _git(clone, "rev-parse", "v9.9.9^{commit}")
    assert subjects == [f"Pin the examples and docs to v9.9.9 ({tagged})", "Release v9.9.9"]
    assert _git(clone, "rev-parse", "HEAD~1") == tagged
    assert _git(clone, "cat-file", "-t", "v9.9.9") == "tag"  # annotated
    # The release commit: the version, and the entry dated; the pin commit: every call at it.
    assert 'version = "9.9.9"' in _git(clone, "show", f"{tagged}:pyproject.toml")
    assert '__version__ = "9.9.9"' in _git(clone, "show", f"{tagged}:bot/__init__.py")
    changelog = (clone / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(r"^## Unreleased\n\n## v9\.9\.9 \(2030-01-02\)\n", changelog, re.M)
    assert f"Commit `{tagged}`" in changelog
    pin = release_files.read_pin(clone)
    assert (pin["PERFBOT_REF"], pin["PERFBOT_VERSION"]) == (tagged, "v9.9.9")
    for name in release_files.pin_files(clone)[:-1]:
        text = (clone / name).read_text(encoding="utf-8")
        calls = re.findall(r"workflows/[\w.-]+\.yml@(\S+) # (v\S+)", text)
        assert calls and set(calls) == {(tagged, "v9.9.9")}, name
        assert before not in text
    assert _release(clone, "check").returncode == 0


def test_what_callers_could_not_use_is_refused(clone: Path) -> None:
    # v0.1.0: its poster lacks the input the examples pass.
    refused = _release(clone, "pin", V010)
    assert refused.returncode == release.REFUSED
    assert "post-results.yml there lacks the input(s) the examples pass: config-path" in (
        refused.stderr
    )
    # A commit that is not on main.
    _git(clone, "checkout", "-q", "-b", "side")
    _git(clone, "commit", "-q", "--allow-empty", "-m", "not on main")
    side = _git(clone, "rev-parse", "HEAD")
    _git(clone, "checkout", "-q", "main")
    refused = _release(clone, "pin", side)
    assert refused.returncode == release.REFUSED and "is not on main" in refused.stderr
    # A version not above the last, a tag that exists, a dirty tree: nothing written.
    head = _git(clone, "rev-parse", "HEAD")
    newest = release_files.released((clone / "CHANGELOG.md").read_text(encoding="utf-8"))[0]
    assert _release(clone, "cut", newest.lstrip("v")).returncode in (release.REFUSED, 2)
    (clone / "README.md").write_text("edited\n")
    dirty = _release(clone, "cut", "10.0.0")
    assert dirty.returncode == release.USAGE and "uncommitted" in dirty.stderr
    _git(clone, "checkout", "-q", "--", "README.md")
    assert _git(clone, "rev-parse", "HEAD") == head and not _git(clone, "status", "--short")


def test_the_committed_pin_is_a_commit_callers_can_use() -> None:
    """examples/pin.env's commit is in this repository's history, on its main line (an
    ancestor of what is checked out), and its bench-package.yml and post-results.yml declare
    every input and secret that the examples pass (tests/workflows/test_example_caller.py
    holds every example and snippet to that commit)."""
    pin = release_files.read_pin(REPO_ROOT)
    assert release.check(REPO_ROOT, pin["PERFBOT_REF"], "HEAD") == []
    pyproject = _git(REPO_ROOT, "show", f"{pin['PERFBOT_REF']}:pyproject.toml")
    assert f"v{release_files.version_of(pyproject)}" == pin["PERFBOT_VERSION"]
