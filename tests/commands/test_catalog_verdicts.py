"""The catalog judged fusion by fusion on the recorded H200 runs (data/h200-catalog): a PR
pair where one fusion's Thunder was made 5% slower flags that fusion alone, two A/A runs flag
none, and the data folder's table is what its script prints."""

from __future__ import annotations

import json
import subprocess
import sys

from paths import REPO_ROOT, run_bot

CATALOG = REPO_ROOT / "data" / "h200-catalog"
PAIR = ["--results", str(CATALOG / "pair" / "rep-1"), "--results", str(CATALOG / "pair" / "rep-2")]


def _machines(*args: str) -> dict[str, dict[str, object]]:
    done = run_bot("report", *args, "--json", "-")
    assert done.returncode in (0, 1), done.stderr
    return {str(m["fusion"]): m for m in json.loads(done.stdout)["machines"]}


def test_the_slowed_fusion_alone_regresses() -> None:
    machines = _machines(*PAIR, "--base", "6a438ce9", "--head", "e0cdef8e")
    assert len(machines) == 14 and "rmsnorm_bwd" in machines
    moved = {f: m["state"] for f, m in machines.items() if m["state"] != "no change"}
    assert moved == {"gelu_bwd": "regressed"}
    assert all(m["judged"] for m in machines.values())  # the model covers every fusion


def test_two_aa_runs_of_the_catalog_move_nothing() -> None:
    aa = ["--results", str(CATALOG / "aa2"), "--base", "c4af5b47", "--head", "baad8fb3"]
    machines = _machines(*aa)
    assert {m["state"] for m in machines.values()} == {"no change"}


def test_each_fusion_is_told_with_its_own_noise_runs() -> None:
    machines = _machines(*PAIR, "--base", "6a438ce9", "--head", "e0cdef8e")
    notes = {f: json.dumps(m["verdict"]) for f, m in machines.items()}
    assert "between-run noise from 12 A/A runs" in notes["rmsnorm_bwd"]
    assert "between-run noise from 4 A/A runs" in notes["softmax_bwd"]


def test_the_data_readme_quotes_the_table_its_script_prints() -> None:
    done = subprocess.run(
        [sys.executable, str(CATALOG / "table.py")], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() in (CATALOG / "README.md").read_text(encoding="utf-8")
