"""Results of several machines for the tests, made from recorded ones.

A machine here is a copy of a recorded machine folder under another asv machine name (the
folder renamed, machine.json's "machine" edited); the samples in it stay as measured. Runner
checks (``<sha>.hygiene.jsonl``) are written by hand: a check is the runner's verdict on the
GPU, not a measured number.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from paths import DATA

H200 = DATA / "h200" / "results"
BASE = "06f650c87bcca99fe961d28d3bec88c38e1bfdbe"
REGRESSED = "9dc516960ffdea53271e079984bda56109317307"
AGAIN = "da17d548f3e6eff323c8348d60147c060c057143"


def copy_machine(src_results: Path, dest_results: Path, machine: str, src: str = "") -> Path:
    """``src_results``'s machine folder (the only one, or ``src``) as ``machine`` under
    ``dest_results``; returns the new machine folder."""
    (src_dir,) = (
        [d for d in src_results.iterdir() if (d / "machine.json").is_file()]
        if not src
        else [src_results / src]
    )
    dest = dest_results / machine
    dest_results.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src_dir, dest)
    info = json.loads((dest / "machine.json").read_text())
    info["machine"] = machine
    (dest / "machine.json").write_text(json.dumps(info))
    return dest


def drop_commit(machine_dir: Path, sha: str) -> None:
    """Remove one commit's results (and sidecars) from a machine folder: that side is missing."""
    for path in machine_dir.iterdir():
        if path.name.startswith(sha[:8]):
            path.unlink()


def write_checks(machine_dir: Path, sha: str, *problems_after: str) -> Path:
    """A runner's before/after checks of `sha` there: the after check fails with the given
    problems, or passes when none are given."""
    lines = [
        {
            "schema": "perfbot-runner-check/1",
            "commit": sha,
            "when": "before",
            "checked_at": "2026-12-01T10:00:00Z",
            "ok": True,
            "problems": [],
            "gpu": {"name": "NVIDIA H200", "sm_mhz": 1980},
        },
        {
            "schema": "perfbot-runner-check/1",
            "commit": sha,
            "when": "after",
            "checked_at": "2026-12-01T10:02:00Z",
            "ok": not problems_after,
            "problems": list(problems_after),
            "gpu": {"name": "NVIDIA H200", "sm_mhz": 1980},
        },
    ]
    path = machine_dir / f"{sha}.hygiene.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def calibrated_config(folder: Path, *machines: str, extra: str = "") -> Path:
    """perfbot.toml with a noise model for each of `machines`: the recorded H200 model, its
    "machine" field renamed, as the machines themselves are the H200 folder renamed (so each
    copy is judged as the H200 would be); `extra` is appended (more tables)."""
    from paths import REPO_ROOT

    folder.mkdir(parents=True, exist_ok=True)
    model = json.loads((REPO_ROOT / "noise" / "nvidia-h200.json").read_text())
    names = []
    for machine in machines:
        path = folder / f"noise-{machine}.json"
        path.write_text(json.dumps({**model, "machine": machine}))
        names.append(f'"{path}"')
    config = folder / "perfbot.toml"
    config.write_text(f"[verdict]\nnoise_model = [{', '.join(names)}]\n{extra}")
    return config
