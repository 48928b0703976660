"""The measuring process's kernel profile (benchmarks/engine/capture_files.py, issue 39 part 2):
nvFuser's kernels found in torch.profiler's kernel records, by the names Kineto gave them on
the H100 (data/h100-issue39, call 3), with the scheduler nvFuser's own profiler named."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.engine.capture_files import KINETO_SOURCE, kernel_profile_from_trace

CALL3 = Path(__file__).resolve().parents[2] / "data" / "h100-issue39" / "call3"
NEW = (
    CALL3 / "rep-1" / "nvidia-h100-80gb-hbm3" / "508733cb4aaebf774fd53cedee2def8c58ffec3f.captures"
)
OLD = CALL3 / "old-capture" / "stock"


def _recorded(point: str, variant: str) -> list[str]:
    """The kernel names the in-process capture of call 3 kept (its parser missed nvFuser's)."""
    profile = json.loads((NEW / point / variant / "profile.json").read_text())
    return [k if isinstance(k, str) else k["name"] for k in profile["other_kernels"]]


def test_kinetos_names_for_nvfusers_kernels_give_the_scheduler_nvfusers_profiler_named() -> None:
    checked = 0
    for folder in sorted(p for p in OLD.glob("*/*") if (p / "profile.json").is_file()):
        point, variant = folder.parent.name, folder.name
        names = _recorded(point, variant)
        events = [
            {"cat": "kernel", "ts": i, "dur": 1.0, "name": n, "args": {"grid": [1, 2, 1]}}
            for i, n in enumerate(names)
        ]
        got = kernel_profile_from_trace({"traceEvents": events})
        old = json.loads((folder / "profile.json").read_text())
        assert got["source"] == KINETO_SOURCE
        assert [k["name"] for k in got["kernel_profiles"]] == [
            k["name"] for k in old["kernel_profiles"]
        ], (point, variant)
        assert [k["scheduler"] for k in got["kernel_profiles"]] == [
            k["scheduler"] for k in old["kernel_profiles"]
        ]
        assert got["segments"] == old["segments"]
        assert len(got["other_kernels"]) == len(names) - got["segments"]
        checked += 1
    assert checked == 12  # RMSNorm backward's 4 pr points, 3 variants


def test_launch_fields_and_every_argument_are_kept() -> None:
    args = {"grid": [1, 264, 1], "block": [8, 32, 1], "registers per thread": 112,
            "shared memory": 50304, "warps per SM": 8.0}  # fmt: skip
    event = {"cat": "kernel", "ts": 5, "dur": 40.5, "args": args,
             "name": "nvf::nvfuser_pointwise_f0_c1_r0_g0(nvf::Tensor<float, 2, 2>)"}  # fmt: skip
    other = {"cat": "kernel", "ts": 1, "name": "void at::native::fill_kernel(int)", "args": {}}
    cpu = {"cat": "cpu_op", "ts": 0, "name": "nvfuser_pointwise_f9_c1_r0_g0"}
    got = kernel_profile_from_trace({"traceEvents": [event, other, cpu]})
    (kernel,) = got["kernel_profiles"]
    assert kernel == {
        "name": "nvfuser_pointwise_f0_c1_r0_g0",
        "scheduler": "pointwise",
        "grid_str": "[1, 264, 1]",
        "block_str": "[8, 32, 1]",
        "registers": 112,
        "shared_mem_str": "[50304]",
        "time_us": 40.5,
        "args": args,
    }
    assert got["other_kernels"] == [{"name": other["name"], "args": {}}]
    assert kernel_profile_from_trace({})["segments"] == 0


def test_the_in_process_capture_is_the_capture_process_s_as_the_readme_says(capsys) -> None:
    """data/h100-issue39/README.md, "What it shows" 2: its command's last line."""
    last = _compare(NEW, OLD, capsys)[-1]
    assert last == "76 of 76 files the same (profile.json: the same kernels)"
    assert last.split(" (")[0] in (CALL3.parent / "README.md").read_text().replace("\n   ", " ")


def _compare(new: Path, old: Path, capsys) -> list[str]:
    import importlib.util

    spec = importlib.util.spec_from_file_location("compare", CALL3.parent / "compare_captures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main([str(new), str(old)]) == 0
    return capsys.readouterr().out.splitlines()


def test_the_launch_fields_of_the_in_process_capture_are_the_capture_process_s(capsys) -> None:
    """data/h100-issue39/README.md, point 8: RMSNorm backward's 4 pr points, 3 variants, before
    (a capture process, nvFuser's profiler) and after (the measuring process, Kineto's kernel
    records) on one machine: every kernel's grid, block, registers and shared memory agree."""
    machine = CALL3.parent / "call6"
    new = next(machine.glob("rmsnorm-after/rep-1/*/b4c82b36*.captures"))
    old = next(machine.glob("rmsnorm-before/rep-1/*/adc6b4a1*.captures"))
    out = _compare(new, old, capsys)
    assert out[-2:] == [
        "launch fields: 12 of 12 kernels the same",
        "76 of 76 files the same (profile.json: the same kernels)",
    ]
    profile = json.loads(
        (new / "float32_16384x8192" / "thunder-prims" / "profile.json").read_text()
    )
    (kernel,) = profile["kernel_profiles"]
    assert kernel["shared_mem_str"] == "[100480]" and kernel["registers"] == 64
    readme = " ".join((CALL3.parent / "README.md").read_text().split())
    assert all(line.split(" (")[0] in readme for line in out[-2:])


def test_over_the_catalog_only_nvfusers_printed_definitions_differ(capsys) -> None:
    """Point 8 over the catalog: what differs between the capture of before and after is the
    hand-written definition's printed text, which differs as much between two processes of the
    same code after issue 39."""
    new = next((CALL3.parent / "call7").glob("catalog-after/rep-1/*/fdf52696*.captures"))
    old = next((CALL3.parent / "call8").glob("catalog-before/rep-1/*/17b2dc43*.captures"))
    out = _compare(new, old, capsys)
    assert out[-2:] == [
        "launch fields: 31 of 31 kernels the same",
        "171 of 179 files the same (profile.json: the same kernels)",
    ]
    differ = [line.split(":")[0] for line in out if ": differs" in line]
    assert len(differ) == 8
    assert {d.rsplit("/", 1)[1] for d in differ} == {"definition.py.txt", "repro.py.txt"}
    assert {d.split("/")[2] for d in differ} == {"nvfuser"}
    again = next((CALL3.parent / "call7").glob("catalog-after/rep-1/*/46256876*.captures"))
    same_code = [line for line in _compare(again, new, capsys) if ": differs" in line]
    assert len(same_code) == 8 and all("fd.ops.size(" in line for line in same_code)
