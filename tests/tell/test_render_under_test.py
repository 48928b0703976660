"""The package under test in the comment: the header's side labels and the provenance rows,
from an ``under_test`` field written here into a copy of a recorded provenance record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from machines_helpers import BASE, H200, REGRESSED, copy_machine
from paths import REPO_ROOT

from bot.commands import cli

VCS = "a" * 40
UNDER_TEST = {
    BASE: {
        "package": "thunder",
        "distribution": "lightning-thunder",
        "side": "base",
        "spec": "lightning-thunder==0.2.6",
        "kind": "requirement",
        "version": "0.2.6",
        "sha256": None,
        "vcs_commit": None,
        "repository": None,
    },
    REGRESSED: {
        "package": "thunder",
        "distribution": "lightning-thunder",
        "side": "head",
        "spec": "git+https://github.com/Lightning-AI/lightning-thunder@" + VCS,
        "kind": "git",
        "version": "0.2.7.dev20260201",
        "sha256": None,
        "vcs_commit": VCS,
        "repository": "Lightning-AI/lightning-thunder",
    },
}


def _with_under_test(tmp_path: Path, records: dict[str, dict[str, object]]) -> Path:
    mdir = copy_machine(H200, tmp_path / "results", "nvidia-h200")
    for sha, under_test in records.items():
        path = mdir / f"{sha}.provenance.jsonl"
        lines = path.read_text().splitlines()
        last = json.loads(lines[-1])
        last["under_test"] = under_test
        path.write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n")
    return tmp_path / "results"


def _comment(results: Path, capsys: pytest.CaptureFixture[str]) -> str:
    argv = ["report", "--results", str(results), "--base", BASE[:8], "--head", REGRESSED[:8]]
    assert cli.main([*argv, "--config", str(REPO_ROOT / "perfbot.toml")], env={}) == 1
    return capsys.readouterr().out


def _where(comment: str) -> str:
    """The line under the headline that names the two sides (and, through the noise model,
    the machine)."""
    (line,) = [x for x in comment.splitlines() if x.startswith("base ")]
    return line


def test_sides_are_named_by_the_package_under_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _comment(_with_under_test(tmp_path, UNDER_TEST), capsys)
    assert _where(out) == (
        "base Thunder 0.2.6 (06f650c87bcc) → head Thunder 0.2.7.dev20260201 at aaaaaaaaaaaa "
        "(9dc516960ffd) · 1 run(s) of base, 1 of head · between-run noise from 12 A/A runs on "
        "nvidia-h200"
    )
    assert "| package under test | Thunder | Thunder |" in out
    assert "| distribution | lightning-thunder | lightning-thunder |" in out
    assert r"| spec | lightning-thunder\=\=0.2.6 \(requirement\) | git\+https:" in out
    assert "| installed version | 0.2.6 | 0.2.7.dev20260201 |" in out
    link = f"[aaaaaaaaaaaa](https://github.com/Lightning-AI/lightning-thunder/commit/{VCS})"
    assert f"| package commit | n/a | {link} |" in out
    assert "| sha256 |" not in out  # neither side has one


def test_without_the_field_the_comment_is_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = _comment(H200, capsys)
    assert "package under test" not in plain
    assert _where(plain) == (
        "base 06f650c87bcc → head 9dc516960ffd · 1 run(s) of base, 1 of head · between-run "
        "noise from 12 A/A runs on nvidia-h200"
    )
    assert _comment(_with_under_test(tmp_path, {}), capsys) == plain


def test_every_value_is_escaped_and_only_a_plain_commit_is_linked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = {
        **UNDER_TEST[REGRESSED],
        "package": "<img src=x>",
        "version": "@maintainers [x](https://evil.example)",
        "sha256": "ab" * 32,
        "repository": "evil/../../x",
    }
    out = _comment(_with_under_test(tmp_path, {REGRESSED: hostile}), capsys)
    assert "<img" not in out and "@maintainers" not in out and "](https://evil" not in out
    assert "&lt;img src\\=x&gt;" in out and "@\u200dmaintainers" in out
    assert "/commit/" not in out  # the repository is not plain: the hash is shown, not linked
    assert f"| package commit | n/a | {VCS} |" in out
    assert f"| sha256 | n/a | {'ab' * 32} |" in out
