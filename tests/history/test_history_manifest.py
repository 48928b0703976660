"""A build of a history that did not install or measure has no results file; the manifest
benchmarks.under_test.builds writes beside the folder names it, and ``history`` says so
instead of letting the nightly vanish (issue 41)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from history_github import CONFIG
from paths import DATA

from bot.commands import cli
from bot.history.load import BUILDS_SCHEMA, unmeasured_builds

NIGHTLIES = DATA / "h200-thunder-nightlies" / "results"


def _with_manifest(tmp: Path, manifest: object) -> Path:
    results = tmp / "group-01"
    shutil.copytree(NIGHTLIES, results)
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    (tmp / "group-01.builds.json").write_text(text, encoding="utf-8")
    return results


BUILDS = {
    "schema": BUILDS_SCHEMA,
    "builds": [
        {"spec": "lightning_thunder-0.2.7.dev20251109.whl", "install_error": "no wheel"},
        {"spec": "lightning_thunder-0.2.7.dev20251116-py3-none-any.whl", "key": "ab" * 20,
         "measure_status": 4, "store_status": 1},
        {"spec": "lightning_thunder-0.2.7.dev20251123-py3-none-any.whl", "key": "cd" * 20,
         "measure_status": 0, "store_status": 2},
    ],
}  # fmt: skip


def test_the_report_names_builds_that_did_not_install_or_measure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _with_manifest(tmp_path, BUILDS)
    assert cli.main(["history", "--results", str(results), "--dry-run", *CONFIG], env={}) == 0
    notes = capsys.readouterr().out.split("Notes:", 1)[1]
    assert "0.2.7.dev20251109.whl: not measured, it did not install (no wheel)" in notes
    assert "dev20251116-py3-none-any.whl (key abababab): its measurement exited 4" in notes
    assert "dev20251123" not in notes  # measured; its failed points are data, not a lost build


def test_a_manifest_that_cannot_be_read_is_said_not_fatal(tmp_path: Path) -> None:
    results = _with_manifest(tmp_path, "{not json")
    (said,) = unmeasured_builds([results])
    assert said.startswith("group-01.builds.json: not read (")
    (tmp_path / "group-01.builds.json").write_text('{"schema": "other/1"}', encoding="utf-8")
    assert unmeasured_builds([results]) == (
        f"group-01.builds.json: not a builds manifest ({BUILDS_SCHEMA})",
    )
    (tmp_path / "group-01.builds.json").unlink()
    assert unmeasured_builds([results]) == ()
