"""benchmarks/engine/room.py: turns only where the GPU's memory holds every process's built
points (the catalog's four held up to 19,842 MiB each on an 80 GB H100), else one at a time;
nvidia-smi is a stand-in here."""

from __future__ import annotations

import subprocess

import pytest

from benchmarks.engine import room


@pytest.mark.parametrize(
    ("processes", "total", "fits", "said"),
    [
        (4, 81_559, True, "4 processes side by side want about 80,000 MiB"),  # H100 80GB
        (4, 143_771, True, "the GPU has 143,771 MiB: turns"),  # H200
        (4, 40_960, False, "the GPU has 40,960 MiB: one process at a time"),  # A100 40GB
        (2, 40_960, True, "2 processes side by side want about 40,000 MiB"),
        (4, None, False, "cannot tell the GPU's memory: one process at a time"),
    ],
)
def test_turns_where_every_process_has_its_share(
    processes: int, total: int | None, fits: bool, said: str
) -> None:
    got, line = room.verdict(processes, total)
    assert got is fits and said in line


def _smi(stdout: str, code: int = 0, seen: list[list[str]] | None = None) -> room.Run:
    def run(args: list[str]) -> subprocess.CompletedProcess[str]:
        if seen is not None:
            seen.append(args)
        return subprocess.CompletedProcess(args, code, stdout, "")

    return run


def test_the_memory_is_the_first_visible_gpus() -> None:
    seen: list[list[str]] = []
    got = room.gpu_memory_mib({"CUDA_VISIBLE_DEVICES": "3,1"}, _smi("81559\n", seen=seen))
    assert got == 81_559 and seen[0][-2:] == ["-i", "3"]
    assert room.gpu_memory_mib({}, _smi("143771\n", seen=seen)) == 143_771
    assert seen[1][-2:] == ["-i", "0"]


@pytest.mark.parametrize("stdout", ["", "[N/A]\n", "nan\n", "inf\n", "81559\n81559\n"])
def test_what_is_no_single_number_is_cannot_tell(stdout: str) -> None:
    assert room.gpu_memory_mib({}, _smi(stdout)) is None


def test_a_failed_or_missing_nvidia_smi_is_cannot_tell() -> None:
    assert room.gpu_memory_mib({}, _smi("81559\n", code=9)) is None

    def missing(args: list[str]) -> subprocess.CompletedProcess[str]:
        raise FileNotFoundError("nvidia-smi")

    assert room.gpu_memory_mib({}, missing) is None
