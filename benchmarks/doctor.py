"""What a GPU runner host needs, and whether this host has it: ``runner_check --explain``.

    python3 -m benchmarks.runner_check --explain

Run it with the ``python3`` the workflows run (the runner user's, on its PATH). It prints one
line an item: ``ok``, ``missing``, ``broken`` (there but unusable: an import that fails,
``nvidia-smi`` that cannot talk to the driver, a lock folder that is a link) or ``wrong
version`` (there, but not the version ``pyproject.toml``'s ``gpu`` extra pins or the nvFuser
wheel was built for), each not-ok line with the command that fixes it. docs/RUNNER.md says how
to set a runner up. Nothing is installed or changed; a host without a GPU gets its answer too.

torch has two right answers, and its line says which it found: the series the nvFuser wheel is
built for (2.10), or the torch and CUDA a noise model of this checkout was fitted on (its
recorded ``stack``: today 2.11 with CUDA 13.0, what every recorded run had, with an ABI shim).
Calling the calibrated stack a wrong version would send runners away from the stack the
verdict's noise was measured on; whether the wheel works on it is the nvFuser line's to say
(it imports, or it is broken).

Exit codes (``ExitCode``): 0 READY, everything there; 3 MISSING, something is missing or broken
(this host cannot measure); 4 WRONG_VERSION, everything is there but some version is off its
pin (it measures, but not what the recorded runs measured); 2, a usage error (argparse).

The checks are pure functions over ``Facts``; ``probe()`` alone imports, runs and stats.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, IntEnum

#: The nvFuser wheel of pyproject's ``gpu`` extra: built for CUDA 13.x and torch 2.10.
NVFUSER_DIST = "nvfuser-cu130-torch210"
TORCH_SERIES = (2, 10)
CUDA_MAJOR = 13
#: CUDA 13 needs an R580 driver or newer.
MIN_DRIVER_MAJOR = 580
ASV_VERSION = "0.6.6"
THUNDER_DIST = "lightning-thunder"
MIN_THUNDER = (0, 2, 6)
MIN_PYTHON = (3, 10)
#: .github/scripts/gpu-lock.sh: ``${PERFBOT_GPU_LOCK:-/var/lock/perfbot/gpu.lock}``.
LOCK_ENV = "PERFBOT_GPU_LOCK"
DEFAULT_LOCK = "/var/lock/perfbot/gpu.lock"

PIP = "python3 -m pip install"
FIX_DRIVER = (
    f"install NVIDIA's driver, R{MIN_DRIVER_MAJOR} or newer "
    f"(sudo apt-get install -y nvidia-driver-{MIN_DRIVER_MAJOR}-server), then reboot"
)
FIX_TORCH = (
    f"{PIP} 'torch=={TORCH_SERIES[0]}.{TORCH_SERIES[1]}.*' "
    f"--index-url https://download.pytorch.org/whl/cu{CUDA_MAJOR}0"
)
FIX_NVFUSER = f"{PIP} {NVFUSER_DIST}"
FIX_THUNDER = f"{PIP} '{THUNDER_DIST}>={'.'.join(map(str, MIN_THUNDER))}'"
FIX_ASV = f"{PIP} 'asv=={ASV_VERSION}'"
FIX_PYNVML = f"{PIP} nvidia-ml-py"
FIX_GIT = "sudo apt-get install -y git"
FIX_FLOCK = "sudo apt-get install -y util-linux"
FIX_PYTHON = "sudo apt-get install -y python3 python3-venv (Python 3.10 or newer)"


def fix_lock(folder: str) -> str:
    return f"sudo install -d -m 2770 -g RUNNER_GROUP {folder} (as root, when provisioning)"


class Status(Enum):
    OK = "ok"
    MISSING = "missing"
    BROKEN = "broken"
    WRONG_VERSION = "wrong version"


class ExitCode(IntEnum):
    READY = 0
    MISSING = 3
    WRONG_VERSION = 4


MEANING = {
    ExitCode.READY: "everything a GPU runner needs is there",
    ExitCode.MISSING: "something is missing or broken: this host cannot measure",
    ExitCode.WRONG_VERSION: "everything is there, but a version is off its pin",
}


@dataclass(frozen=True)
class Finding:
    item: str
    status: Status
    detail: str
    fix: str = ""  # the command that fixes it; empty when ok


@dataclass(frozen=True)
class Imported:
    """What importing one module found: ``found`` (its files are there), ``error`` (the
    exception of an import that failed; None: it imported), ``version`` (of its wheel)."""

    found: bool
    version: str | None = None
    error: str | None = None


NOT_FOUND = Imported(found=False)


@dataclass(frozen=True)
class Ran:
    """What running one program found: ``path`` None when it is not on PATH; ``error`` the
    reason a run failed (exit status, stderr, timeout); ``output`` its stdout."""

    path: str | None
    output: str = ""
    error: str | None = None


@dataclass(frozen=True)
class Lock:
    """The GPU lock as .github/scripts/gpu-lock.sh sees it."""

    path: str
    folder_is_dir: bool
    folder_is_link: bool
    folder_writable: bool
    file_is_link: bool


@dataclass(frozen=True)
class Calibrated:
    """A noise model's recorded stack, as far as this check reads it: the machine it is for,
    and the torch and CUDA versions its runs had (``noise/<machine>.json``, ``stack``)."""

    model: str
    torch: tuple[str, ...]
    cuda: tuple[str, ...]


@dataclass(frozen=True)
class Facts:
    python: tuple[int, int, int]
    nvidia_smi: Ran
    torch: Imported
    torch_cuda: str | None  # torch.version.cuda: None for a CPU build
    cuda_available: bool
    cuda_error: str | None  # why torch.cuda.is_available() could not be asked
    nvfuser: Imported
    thunder: Imported
    thunder_nvfuser: bool  # thunder.extend.get_executor("nvfuser") is not None
    thunder_note: str  # the warnings or error of asking it
    asv: Imported
    pynvml: Imported
    lock: Lock
    git: Ran
    flock: Ran
    #: The noise models' recorded stacks (doctor_probe reads noise/*.json): their torch is
    #: accepted beside the wheel's series.
    calibrated: tuple[Calibrated, ...] = ()


def release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version: "2.10.0+cu130" -> (2, 10, 0)."""
    found = re.match(r"\d+(?:\.\d+)*", version.strip())
    return tuple(int(n) for n in found.group(0).split(".")) if found else ()


def _dotted(numbers: Sequence[int]) -> str:
    return ".".join(map(str, numbers))


def _not_there(item: str, module: str, imp: Imported, fix: str) -> Finding | None:
    """The finding of a module that is not installed or does not import; None if it did."""
    if not imp.found:
        return Finding(item, Status.MISSING, f"{module} is not installed", fix)
    if imp.error is not None:
        return Finding(item, Status.BROKEN, f"{module} does not import: {imp.error}", fix)
    return None


def check_python(version: tuple[int, int, int]) -> Finding:
    shown = _dotted(version)
    if version[:2] < MIN_PYTHON:
        return Finding(
            "Python", Status.WRONG_VERSION, f"{shown}, need {_dotted(MIN_PYTHON)}+", FIX_PYTHON
        )
    return Finding("Python", Status.OK, shown)


def check_driver(smi: Ran) -> Finding:
    item = "NVIDIA driver"
    if smi.path is None:
        return Finding(item, Status.MISSING, "nvidia-smi is not on PATH", FIX_DRIVER)
    if smi.error is not None:
        return Finding(item, Status.BROKEN, f"nvidia-smi fails: {smi.error}", FIX_DRIVER)
    rows = [[p.strip() for p in line.split(",")] for line in smi.output.splitlines() if line]
    if not rows or len(rows[0]) < 2:
        return Finding(item, Status.BROKEN, "nvidia-smi lists no GPU", FIX_DRIVER)
    driver, name = rows[0][0], rows[0][1]
    shown = f"{driver}, {len(rows)} GPU(s): {name}"
    if release(driver)[:1] < (MIN_DRIVER_MAJOR,):
        detail = f"{shown}; CUDA {CUDA_MAJOR} needs R{MIN_DRIVER_MAJOR}+"
        return Finding(item, Status.WRONG_VERSION, detail, FIX_DRIVER)
    return Finding(item, Status.OK, shown)


def _series(versions: Sequence[str]) -> str:
    return "/".join(sorted({_dotted(release(v)[:2]) for v in versions}))


def check_torch(
    torch: Imported, cuda: str | None = None, models: Sequence[Calibrated] = ()
) -> Finding:
    """The wheel's series, or a noise model's torch with its CUDA (module docstring); which
    one it is, said."""
    bad = _not_there("torch", "torch", torch, FIX_TORCH)
    if bad is not None:
        return bad
    version = torch.version or "?"
    wheel = _dotted(TORCH_SERIES)
    if release(version)[:2] == TORCH_SERIES:
        return Finding("torch", Status.OK, f"{version}: the series {NVFUSER_DIST} is built for")
    fitted = [m for m in models if release(version)[:2] in {release(t)[:2] for t in m.torch}]
    cuda_of = release(cuda or "")[:2]
    on = [m for m in fitted if cuda_of and cuda_of in {release(c)[:2] for c in m.cuda}]
    if on:
        names = ", ".join(m.model for m in on)
        detail = (
            f"{version}: the stack the {names} noise model was fitted on (the nvFuser wheel is "
            f"built for {wheel}; its import is checked below)"
        )
        return Finding("torch", Status.OK, detail)
    detail = f"{version}; {NVFUSER_DIST} is built for torch {wheel}"
    for m in models:
        detail += (
            f", the {m.model} noise model was fitted on torch {_series(m.torch)} with CUDA "
            f"{_series(m.cuda)}"
        )
    if fitted:
        detail += f" (this torch is built for CUDA {cuda or 'none'})"
    return Finding("torch", Status.WRONG_VERSION, detail, FIX_TORCH)


def check_cuda(torch: Imported, cuda: str | None, available: bool, error: str | None) -> Finding:
    item = "CUDA"
    if not torch.found or torch.error is not None:
        return Finding(item, Status.MISSING, "no torch to ask (see torch)", FIX_TORCH)
    if cuda is None:
        return Finding(item, Status.MISSING, "torch is a CPU build", FIX_TORCH)
    if release(cuda)[:1] != (CUDA_MAJOR,):
        detail = f"torch built for CUDA {cuda}; {NVFUSER_DIST} needs CUDA {CUDA_MAJOR}"
        return Finding(item, Status.WRONG_VERSION, detail, FIX_TORCH)
    if not available:
        why = f": {error}" if error else ""
        detail = f"CUDA {cuda} build, but torch.cuda.is_available() is False{why}"
        return Finding(item, Status.MISSING, detail, FIX_DRIVER)
    return Finding(item, Status.OK, f"{cuda}, a device available")


def check_nvfuser(nvfuser: Imported) -> Finding:
    bad = _not_there("nvFuser", "nvfuser_direct", nvfuser, FIX_NVFUSER)
    if bad is not None:
        return bad
    return Finding("nvFuser", Status.OK, f"nvfuser_direct {nvfuser.version or '(no version)'}")


def check_thunder(thunder: Imported) -> Finding:
    bad = _not_there("Thunder", "thunder", thunder, FIX_THUNDER)
    if bad is not None:
        return bad
    version = thunder.version or "?"
    if release(version)[:3] < MIN_THUNDER:
        detail = f"{version}, need {_dotted(MIN_THUNDER)}+"
        return Finding("Thunder", Status.WRONG_VERSION, detail, FIX_THUNDER)
    return Finding("Thunder", Status.OK, version)


def check_thunder_executor(thunder: Imported, usable: bool, note: str) -> Finding:
    item = "Thunder's nvFuser executor"
    if not thunder.found or thunder.error is not None:
        return Finding(item, Status.MISSING, "no Thunder to ask (see Thunder)", FIX_THUNDER)
    if not usable:
        why = f": {note}" if note else ""
        detail = (
            'thunder.extend.get_executor("nvfuser") is None (it needs CUDA and'
            f" nvFuser 0.2.8+){why}"
        )
        return Finding(item, Status.BROKEN, detail, f"{FIX_NVFUSER}, with a CUDA build of torch")
    return Finding(item, Status.OK, 'thunder.extend.get_executor("nvfuser") is registered')


def check_asv(asv: Imported) -> Finding:
    bad = _not_there("asv", "asv", asv, FIX_ASV)
    if bad is not None:
        return bad
    if asv.version != ASV_VERSION:
        detail = f"{asv.version}, pinned {ASV_VERSION}"
        return Finding("asv", Status.WRONG_VERSION, detail, FIX_ASV)
    return Finding("asv", Status.OK, ASV_VERSION)


def check_pynvml(pynvml: Imported) -> Finding:
    bad = _not_there("nvidia-ml-py", "pynvml", pynvml, FIX_PYNVML)
    if bad is not None:
        return bad
    return Finding("nvidia-ml-py", Status.OK, f"pynvml {pynvml.version or '(no version)'}")


def check_lock(lock: Lock) -> Finding:
    item = "GPU lock folder"
    folder = os.path.dirname(lock.path)
    fix = fix_lock(folder)
    if lock.folder_is_link:
        return Finding(item, Status.BROKEN, f"{folder} is a link: gpu-lock.sh refuses it", fix)
    if not lock.folder_is_dir:
        return Finding(item, Status.MISSING, f"no folder {folder} ({LOCK_ENV})", fix)
    if lock.file_is_link:
        detail = f"{lock.path} is a link: gpu-lock.sh refuses it"
        return Finding(item, Status.BROKEN, detail, f"sudo rm {lock.path}")
    if not lock.folder_writable:
        return Finding(item, Status.BROKEN, f"{folder} is not writable by this user", fix)
    return Finding(item, Status.OK, f"{folder}, writable")


def check_tool(item: str, ran: Ran, fix: str) -> Finding:
    name = item.split()[0]
    if ran.path is None:
        return Finding(item, Status.MISSING, f"{name} is not on PATH", fix)
    if ran.error is not None:
        return Finding(item, Status.BROKEN, f"{name} fails: {ran.error}", fix)
    return Finding(item, Status.OK, ran.output.strip().splitlines()[0] if ran.output else ran.path)


def explain(facts: Facts) -> list[Finding]:
    """Every item a GPU runner needs, judged on what was probed (pure)."""
    return [
        check_driver(facts.nvidia_smi),
        check_cuda(facts.torch, facts.torch_cuda, facts.cuda_available, facts.cuda_error),
        check_torch(facts.torch, facts.torch_cuda, facts.calibrated),
        check_nvfuser(facts.nvfuser),
        check_thunder(facts.thunder),
        check_thunder_executor(facts.thunder, facts.thunder_nvfuser, facts.thunder_note),
        check_asv(facts.asv),
        check_pynvml(facts.pynvml),
        check_lock(facts.lock),
        check_tool("git", facts.git, FIX_GIT),
        check_tool("flock (util-linux)", facts.flock, FIX_FLOCK),
        check_python(facts.python),
    ]


def exit_code(findings: Sequence[Finding]) -> ExitCode:
    statuses = {f.status for f in findings}
    if statuses & {Status.MISSING, Status.BROKEN}:
        return ExitCode.MISSING
    if Status.WRONG_VERSION in statuses:
        return ExitCode.WRONG_VERSION
    return ExitCode.READY


def render(findings: Sequence[Finding]) -> str:
    """One line an item, and a last line with the verdict and the exit code."""
    width = max(len(f.item) for f in findings)
    lines = []
    for f in findings:
        fix = f" -- fix: {f.fix}" if f.status is not Status.OK and f.fix else ""
        lines.append(f"{f.status.value:<13} {f.item:<{width}}  {f.detail}{fix}")
    code = exit_code(findings)
    bad = [f for f in findings if f.status is not Status.OK]
    tally = {s: sum(f.status is s for f in bad) for s in Status}
    counts = ", ".join(f"{n} {s.value}" for s, n in tally.items() if n)
    lines.append(f"== {counts or 'all ok'}: exit {code.value} ({code.name}: {MEANING[code]})")
    return "\n".join(lines)


def exit_codes_help() -> str:
    return "exit codes:\n" + "\n".join(
        f"  {code.value}  {code.name:<13} {MEANING[code]}" for code in ExitCode
    )
