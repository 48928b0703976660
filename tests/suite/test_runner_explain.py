"""``python -m benchmarks.runner_check --explain`` (benchmarks/doctor.py): what a GPU runner host
needs. Each check judged on fakes (there, missing, broken, off its pin), the wording of a line
that is not ok (its fix command on it), the exit codes, the probes at the edge on stand-ins
(a fake nvidia-smi on PATH, lock folders in a temporary folder, a module that fails to import),
and the command itself on this machine, which has no GPU."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from paths import REPO_ROOT

from benchmarks import doctor as d
from benchmarks import doctor_probe as p
from benchmarks import runner_check
from benchmarks.doctor import ExitCode, Facts, Imported, Lock, Ran, Status

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

SMI_OK = "580.159.04, NVIDIA H200\n"
READY = Facts(
    python=(3, 12, 3),
    nvidia_smi=Ran(path="/usr/bin/nvidia-smi", output=SMI_OK),
    torch=Imported(found=True, version="2.10.0+cu130"),
    torch_cuda="13.0",
    cuda_available=True,
    cuda_error=None,
    nvfuser=Imported(found=True, version="0.2.36.dev20260301"),
    thunder=Imported(found=True, version="0.2.6"),
    thunder_nvfuser=True,
    thunder_note="",
    asv=Imported(found=True, version="0.6.6"),
    pynvml=Imported(found=True, version="13.610.43"),
    lock=Lock(
        path="/var/lock/perfbot/gpu.lock",
        folder_is_dir=True,
        folder_is_link=False,
        folder_writable=True,
        file_is_link=False,
    ),
    git=Ran(path="/usr/bin/git", output="git version 2.43.0\n"),
    flock=Ran(path="/usr/bin/flock", output="flock from util-linux 2.39.3\n"),
)
BROKEN_IMPORT = Imported(found=True, error="ImportError: undefined symbol: _ZN3c10...")


def findings(**changed: Any) -> dict[str, d.Finding]:
    return {f.item: f for f in d.explain(dataclasses.replace(READY, **changed))}


def not_ok(**changed: Any) -> dict[str, Status]:
    return {k: f.status for k, f in findings(**changed).items() if f.status is not Status.OK}


def test_a_ready_host_is_all_ok_and_exits_0() -> None:
    found = d.explain(READY)
    assert [f.status for f in found] == [Status.OK] * len(found)
    assert d.exit_code(found) is ExitCode.READY
    assert int(ExitCode.READY) == 0
    assert d.render(found).splitlines()[-1].startswith("== all ok: exit 0 (READY")


def test_every_item_the_brief_names_is_checked() -> None:
    assert list(findings()) == [
        "NVIDIA driver",
        "CUDA",
        "torch",
        "nvFuser",
        "Thunder",
        "Thunder's nvFuser executor",
        "asv",
        "nvidia-ml-py",
        "GPU lock folder",
        "git",
        "flock (util-linux)",
        "Python",
    ]


@pytest.mark.parametrize(
    ("changed", "expected"),
    [
        # the driver
        ({"nvidia_smi": Ran(path=None)}, {"NVIDIA driver": Status.MISSING}),
        (
            {"nvidia_smi": Ran(path="/x", error="exit 9: couldn't communicate with the driver")},
            {"NVIDIA driver": Status.BROKEN},
        ),
        ({"nvidia_smi": Ran(path="/x", output="")}, {"NVIDIA driver": Status.BROKEN}),
        (
            {"nvidia_smi": Ran(path="/x", output="535.104.05, NVIDIA H100\n")},
            {"NVIDIA driver": Status.WRONG_VERSION},
        ),
        # CUDA
        ({"torch_cuda": None}, {"CUDA": Status.MISSING}),
        ({"torch_cuda": "12.8"}, {"CUDA": Status.WRONG_VERSION}),
        ({"cuda_available": False}, {"CUDA": Status.MISSING}),
        # torch
        (
            {"torch": d.NOT_FOUND, "torch_cuda": None, "cuda_available": False},
            {"torch": Status.MISSING, "CUDA": Status.MISSING},
        ),
        ({"torch": BROKEN_IMPORT}, {"torch": Status.BROKEN, "CUDA": Status.MISSING}),
        ({"torch": Imported(found=True, version="2.11.0")}, {"torch": Status.WRONG_VERSION}),
        # nvFuser
        ({"nvfuser": d.NOT_FOUND}, {"nvFuser": Status.MISSING}),
        ({"nvfuser": BROKEN_IMPORT}, {"nvFuser": Status.BROKEN}),
        # Thunder and its executor
        (
            {"thunder": d.NOT_FOUND, "thunder_nvfuser": False},
            {"Thunder": Status.MISSING, "Thunder's nvFuser executor": Status.MISSING},
        ),
        (
            {"thunder": BROKEN_IMPORT, "thunder_nvfuser": False},
            {"Thunder": Status.BROKEN, "Thunder's nvFuser executor": Status.MISSING},
        ),
        ({"thunder": Imported(found=True, version="0.2.5")}, {"Thunder": Status.WRONG_VERSION}),
        ({"thunder": Imported(found=True, version="0.2.7.dev20260201")}, {}),
        ({"thunder_nvfuser": False}, {"Thunder's nvFuser executor": Status.BROKEN}),
        # asv, nvidia-ml-py
        ({"asv": d.NOT_FOUND}, {"asv": Status.MISSING}),
        ({"asv": Imported(found=True, version="0.6.4")}, {"asv": Status.WRONG_VERSION}),
        ({"pynvml": d.NOT_FOUND}, {"nvidia-ml-py": Status.MISSING}),
        # the GPU lock, as gpu-lock.sh sees it
        (
            {"lock": dataclasses.replace(READY.lock, folder_is_dir=False)},
            {"GPU lock folder": Status.MISSING},
        ),
        (
            {"lock": dataclasses.replace(READY.lock, folder_is_link=True)},
            {"GPU lock folder": Status.BROKEN},
        ),
        (
            {"lock": dataclasses.replace(READY.lock, file_is_link=True)},
            {"GPU lock folder": Status.BROKEN},
        ),
        (
            {"lock": dataclasses.replace(READY.lock, folder_writable=False)},
            {"GPU lock folder": Status.BROKEN},
        ),
        # the tools, Python
        ({"git": Ran(path=None)}, {"git": Status.MISSING}),
        ({"flock": Ran(path=None)}, {"flock (util-linux)": Status.MISSING}),
        ({"python": (3, 9, 18)}, {"Python": Status.WRONG_VERSION}),
        ({"python": (3, 10, 0)}, {}),
    ],
)
def test_one_fact_changed_changes_its_own_items_only(
    changed: dict[str, Any], expected: dict[str, Status]
) -> None:
    assert not_ok(**changed) == expected


def test_versions_are_read_by_their_leading_numbers() -> None:
    assert d.release("2.10.0+cu130") == (2, 10, 0)
    assert d.release("0.2.7.dev20260201") == (0, 2, 7)
    assert d.release("580.159.04") == (580, 159, 4)
    assert d.release("[N/A]") == ()


def test_a_missing_item_says_so_and_shows_its_fix_command() -> None:
    text = d.render(d.explain(dataclasses.replace(READY, asv=d.NOT_FOUND, nvidia_smi=Ran(None))))
    asv = next(line for line in text.splitlines() if " asv " in line)
    assert asv.startswith("missing ")
    assert "asv is not installed -- fix: python3 -m pip install 'asv==0.6.6'" in asv
    driver = next(line for line in text.splitlines() if "NVIDIA driver" in line)
    assert "nvidia-smi is not on PATH -- fix: " in driver and "sudo apt-get install" in driver
    lock = d.render(
        d.explain(
            dataclasses.replace(READY, lock=dataclasses.replace(READY.lock, folder_is_dir=False))
        )
    )
    assert "fix: sudo install -d -m 2770 -g RUNNER_GROUP /var/lock/perfbot" in lock
    assert text.splitlines()[-1] == (
        "== 2 missing: exit 3 (MISSING: something is missing or broken: this host cannot measure)"
    )


def test_a_wrong_version_shows_what_is_there_and_what_is_wanted() -> None:
    text = d.render(d.explain(dataclasses.replace(READY, torch=Imported(True, "2.11.0"))))
    line = next(line for line in text.splitlines() if " torch " in line)
    assert line.startswith("wrong version torch ")
    assert "2.11.0; nvfuser-cu130-torch210 is built for torch 2.10" in line
    assert "fix: python3 -m pip install 'torch==2.10.*' --index-url" in line
    assert "exit 4 (WRONG_VERSION" in text.splitlines()[-1]


def test_ok_lines_carry_no_fix() -> None:
    assert "fix:" not in d.render(d.explain(READY))


@pytest.mark.parametrize(
    ("changed", "code"),
    [
        ({}, ExitCode.READY),
        ({"asv": Imported(True, "0.6.4")}, ExitCode.WRONG_VERSION),
        ({"asv": d.NOT_FOUND}, ExitCode.MISSING),
        ({"thunder_nvfuser": False}, ExitCode.MISSING),  # broken counts as missing
        ({"nvidia_smi": Ran("/x", error="exit 9: no driver")}, ExitCode.MISSING),
        ({"lock": dataclasses.replace(READY.lock, folder_is_link=True)}, ExitCode.MISSING),
        ({"asv": Imported(True, "0.6.4"), "pynvml": d.NOT_FOUND}, ExitCode.MISSING),
    ],
)
def test_the_exit_code_is_the_worst_finding(changed: dict[str, Any], code: ExitCode) -> None:
    assert d.exit_code(d.explain(dataclasses.replace(READY, **changed))) is code


def test_the_exit_codes_are_named_distinct_and_documented() -> None:
    assert {c.name: c.value for c in ExitCode} == {"READY": 0, "MISSING": 3, "WRONG_VERSION": 4}
    assert 2 not in {c.value for c in ExitCode}  # argparse's usage error
    helped = d.exit_codes_help()
    for code in ExitCode:
        assert f"{code.value}  {code.name}" in helped
    doc = (REPO_ROOT / "docs" / "RUNNER.md").read_text(encoding="utf-8")
    for code in ExitCode:
        assert re.search(rf"\b{code.value}\b.*{code.name}", doc), code


def test_the_pins_are_pyprojects_and_the_lock_is_gpu_lock_shs() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    gpu = project["project"]["optional-dependencies"]["gpu"]
    assert f"asv=={d.ASV_VERSION}" in gpu and d.NVFUSER_DIST in gpu and "nvidia-ml-py" in gpu
    assert f"{d.THUNDER_DIST}>={'.'.join(map(str, d.MIN_THUNDER))}" in gpu
    assert f"cu{d.CUDA_MAJOR}0-torch{d.TORCH_SERIES[0]}{d.TORCH_SERIES[1]}" in d.NVFUSER_DIST
    assert project["project"]["requires-python"] == ">=" + ".".join(map(str, d.MIN_PYTHON))
    lock_sh = (REPO_ROOT / ".github" / "scripts" / "gpu-lock.sh").read_text(encoding="utf-8")
    assert f"${{{d.LOCK_ENV}:-{d.DEFAULT_LOCK}}}" in lock_sh


def test_main_prints_the_lines_and_returns_the_code() -> None:
    said: list[str] = []
    code = p.main(said.append, lambda: dataclasses.replace(READY, git=Ran(None)))
    assert code is ExitCode.MISSING
    assert "missing       git" in said[0] and "fix: sudo apt-get install -y git" in said[0]


def test_runner_check_explain_runs_the_doctor(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(p, "probe", lambda: dataclasses.replace(READY, torch_cuda="12.8"))
    assert runner_check.main(["--explain"]) == 4
    assert "wrong version CUDA" in capsys.readouterr().out
    monkeypatch.setattr(p, "probe", lambda: READY)
    assert runner_check.main(["--explain"]) == 0


@pytest.mark.parametrize(
    "argv",
    [["--explain", "--when", "before"], ["--when", "before"], ["--commit", "x", "--out", "y"]],
)
def test_runner_check_refuses_mixed_or_partial_arguments(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        runner_check.main(argv)
    assert stop.value.code == 2


# -- the edge, on stand-ins -----------------------------------------------------------------


def fake_tool(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return folder


def test_run_tool_reads_a_driver_and_a_failing_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(fake_tool(tmp_path / "ok", "nvidia-smi", f"printf '{SMI_OK}'")))
    ran = p.run_tool(["nvidia-smi", "--query-gpu=driver_version,name"])
    assert d.check_driver(ran) == d.Finding(
        "NVIDIA driver", Status.OK, "580.159.04, 1 GPU(s): NVIDIA H200"
    )
    said = 'echo "NVIDIA-SMI has failed because it couldn\'t communicate with the driver"; exit 9'
    monkeypatch.setenv("PATH", str(fake_tool(tmp_path / "bad", "nvidia-smi", said)))
    found = d.check_driver(p.run_tool(["nvidia-smi"]))
    assert found.status is Status.BROKEN and "exit 9: NVIDIA-SMI has failed" in found.detail
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert p.run_tool(["nvidia-smi"]) == Ran(path=None)


def test_probe_lock_sees_what_gpu_lock_sh_refuses(tmp_path: Path) -> None:
    def judged(path: Path) -> Status:
        return d.check_lock(p.probe_lock(str(path))).status

    assert judged(tmp_path / "none" / "gpu.lock") is Status.MISSING
    (tmp_path / "real").mkdir()
    assert judged(tmp_path / "real" / "gpu.lock") is Status.OK
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert judged(tmp_path / "link" / "gpu.lock") is Status.BROKEN
    (tmp_path / "real" / "gpu.lock").symlink_to(tmp_path / "elsewhere")
    assert judged(tmp_path / "real" / "gpu.lock") is Status.BROKEN


def test_an_import_is_found_missing_or_broken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "perfbot_fake_broken.py").write_text("raise ImportError('undefined symbol: x')\n")
    (tmp_path / "perfbot_fake_fine.py").write_text("__version__ = '1.2.3'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert p._import("perfbot_fake_not_there", []) is d.NOT_FOUND
    broken = p._import("perfbot_fake_broken", [])
    assert broken.found and broken.error == "ImportError: undefined symbol: x"
    assert p._import("perfbot_fake_fine", ["perfbot-no-such-dist"]) == Imported(True, "1.2.3")
    assert p._import("asv", ["asv"]) == Imported(True, "0.6.6")


def test_importing_it_imports_nothing_heavy_and_runs_nothing() -> None:
    code = (
        "import sys, subprocess; subprocess.run = None; "
        "import benchmarks.doctor, benchmarks.doctor_probe, benchmarks.runner_check; "
        "heavy = {'torch', 'thunder', 'nvfuser_direct', 'pynvml', 'asv'} & set(sys.modules); "
        "assert not heavy, heavy"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(
    shutil.which("nvidia-smi") is not None, reason="this test is about a host without a GPU"
)
def test_the_command_on_this_cpu_machine_says_the_driver_and_cuda_are_missing(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "PERFBOT_GPU_LOCK": str(tmp_path / "gpu.lock")}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.runner_check", "--explain"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == int(ExitCode.MISSING) == 3, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(
        re.match(r"missing +NVIDIA driver +nvidia-smi is not on PATH -- fix: ", x) for x in lines
    )
    assert any(re.match(r"missing +CUDA ", x) for x in lines)
    assert any(re.match(r"ok +GPU lock folder ", x) for x in lines)
    assert lines[-1].startswith("== ") and "exit 3 (MISSING" in lines[-1]
    assert done.stderr == ""


# -- torch: the wheel's series or the calibrated stack (issue 40) -----------------------------


def _torch(version: str, cuda: str = "13.0") -> d.Finding:
    facts = dataclasses.replace(
        READY, torch=Imported(True, version), torch_cuda=cuda, calibrated=p.read_models()
    )
    return {f.item: f for f in d.explain(facts)}["torch"]


def test_the_shipped_models_stack_is_what_runner_check_reads() -> None:
    stack = json.loads((REPO_ROOT / "noise" / "nvidia-h200.json").read_text())["stack"]
    expected = d.Calibrated("nvidia-h200", tuple(stack["torch"]), tuple(stack["cuda"]))
    assert p.read_models() == (expected,)
    assert p.probe({}).calibrated == (expected,)  # what --explain judges


def test_both_stacks_are_accepted_and_the_line_says_which() -> None:
    assert _torch("2.10.0+cu130") == d.Finding(
        "torch", Status.OK, "2.10.0+cu130: the series nvfuser-cu130-torch210 is built for"
    )
    calibrated = _torch("2.11.0+cu130")
    assert calibrated == d.Finding(
        "torch",
        Status.OK,
        "2.11.0+cu130: the stack the nvidia-h200 noise model was fitted on (the nvFuser wheel "
        "is built for 2.10; its import is checked below)",
    )
    ready = dataclasses.replace(
        READY, torch=Imported(True, "2.11.0+cu130"), calibrated=p.read_models()
    )
    assert d.exit_code(d.explain(ready)) is ExitCode.READY


@pytest.mark.parametrize(
    ("version", "cuda", "said"),
    [
        ("2.12.0+cu130", "13.0", ""),
        ("2.9.1+cu130", "13.0", ""),
        ("2.11.0+cu128", "12.8", " (this torch is built for CUDA 12.8)"),
    ],
)
def test_any_other_torch_is_a_wrong_version_naming_both(version: str, cuda: str, said: str) -> None:
    found = _torch(version, cuda)
    assert found.status is Status.WRONG_VERSION and found.fix == d.FIX_TORCH
    assert found.detail == (
        f"{version}; nvfuser-cu130-torch210 is built for torch 2.10, the nvidia-h200 noise "
        f"model was fitted on torch 2.11 with CUDA 13.0{said}"
    )


def test_a_model_without_a_stack_or_unreadable_accepts_no_other_torch(tmp_path: Path) -> None:
    model = json.loads((REPO_ROOT / "noise" / "nvidia-h200.json").read_text())
    (tmp_path / "old.json").write_text(json.dumps({k: v for k, v in model.items() if k != "stack"}))
    (tmp_path / "broken.json").write_text("{")
    unknown = {**model, "stack": {**model["stack"], "torch": [None]}}
    (tmp_path / "unknown.json").write_text(json.dumps(unknown))
    (tmp_path / "other.json").write_text(json.dumps({**model, "machine": "gpu-b"}))
    assert [m.model for m in p.read_models(tmp_path)] == ["gpu-b"]
    assert p.read_models(tmp_path / "none") == ()
