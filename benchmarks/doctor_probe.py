"""The edge of ``runner_check --explain``: what this host has, probed (imports, programs, the
lock folder), then judged by the pure checks of benchmarks/doctor.py.

Kept apart so that importing the checks loads nothing and runs nothing; only :func:`probe`
imports torch, nvFuser, Thunder, asv and pynvml, runs ``nvidia-smi``, ``git`` and ``flock``,
stats the lock folder and reads the torch and CUDA this checkout's noise models were fitted on
(``noise/*.json``, their ``stack``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.doctor import (
    DEFAULT_LOCK,
    LOCK_ENV,
    NOT_FOUND,
    NVFUSER_DIST,
    THUNDER_DIST,
    Calibrated,
    ExitCode,
    Facts,
    Imported,
    Lock,
    Ran,
    exit_code,
    explain,
    render,
)


def _error(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{exc.__class__.__name__}: {text[:200]}" if text else exc.__class__.__name__


def _dist_version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _import(module: str, dists: Sequence[str]) -> Imported:
    import importlib
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        return NOT_FOUND
    try:
        mod = importlib.import_module(module)
    except Exception as exc:  # an ABI mismatch, a missing dependency: all "broken"
        return Imported(found=True, error=_error(exc))
    version = next((v for d in dists if (v := _dist_version(d)) is not None), None)
    own = getattr(mod, "__version__", None)
    return Imported(found=True, version=version or (str(own) if own else None))


def run_tool(args: Sequence[str], timeout: float = 30) -> Ran:
    path = shutil.which(args[0])
    if path is None:
        return Ran(path=None)
    try:
        done = subprocess.run(
            [path, *args[1:]], capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Ran(path=path, error=_error(exc))
    if done.returncode != 0:
        said = " ".join((done.stderr or done.stdout).split())[-200:]
        return Ran(path=path, output=done.stdout, error=f"exit {done.returncode}: {said}")
    return Ran(path=path, output=done.stdout)


def probe_lock(path: str) -> Lock:
    folder = os.path.dirname(path)
    return Lock(
        path=path,
        folder_is_dir=os.path.isdir(folder),
        folder_is_link=os.path.islink(folder),
        folder_writable=os.access(folder, os.W_OK),
        file_is_link=os.path.islink(path),
    )


def _torch_cuda(torch: Imported) -> tuple[str | None, bool, str | None]:
    if not torch.found or torch.error is not None:
        return None, False, None
    try:
        import torch as torch_module

        cuda = torch_module.version.cuda
        return (str(cuda) if cuda else None), bool(torch_module.cuda.is_available()), None
    except Exception as exc:
        return None, False, _error(exc)


def _thunder_nvfuser(thunder: Imported) -> tuple[bool, str]:
    """Thunder 0.2.6 registers its nvFuser executor only with CUDA and nvFuser 0.2.8+."""
    import importlib

    if not thunder.found or thunder.error is not None:
        return False, ""
    try:
        extend = importlib.import_module("thunder.extend")
        return extend.get_executor("nvfuser") is not None, ""
    except Exception as exc:
        return False, _error(exc)


def calibrated(data: object) -> Calibrated | None:
    """A model file's content as :class:`Calibrated`; None where it records no stack (a file
    from before it) or is not a model: such a file accepts no other torch."""
    if not isinstance(data, dict) or not isinstance(data.get("stack"), dict):
        return None
    stack, model = data["stack"], data.get("machine")

    def texts(key: str) -> tuple[str, ...]:
        found = stack.get(key)
        return tuple(v for v in found if isinstance(v, str)) if isinstance(found, list) else ()

    torch, cuda = texts("torch"), texts("cuda")
    if not isinstance(model, str) or not torch or not cuda:
        return None
    return Calibrated(model, torch, cuda)


#: This checkout's noise models (perfbot.toml's [verdict] noise_model names one of them).
NOISE = Path(__file__).resolve().parents[1] / "noise"


def read_models(folder: Path = NOISE) -> tuple[Calibrated, ...]:
    """Every noise model's recorded torch and CUDA; a file that does not read accepts nothing
    (runner_check never fails on the checkout's own files)."""
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            model = calibrated(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
        if model is not None:
            found.append(model)
    return tuple(found)


def probe(environ: dict[str, str] | None = None) -> Facts:
    """Look at this host: imports torch, nvFuser and Thunder, runs nvidia-smi, git, flock."""
    env = os.environ if environ is None else environ
    torch = _import("torch", ["torch"])
    cuda, available, cuda_error = _torch_cuda(torch)
    # Thunder decides at import whether its nvFuser executor is there, and warns why not.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        thunder = _import("thunder", [THUNDER_DIST])
        usable, note = _thunder_nvfuser(thunder)
    said = [" ".join(str(w.message).split())[:200] for w in caught]
    note = note or "; ".join(m for m in said if "nvfuser" in m.lower())[:400]
    nvfuser = _import("nvfuser_direct", [NVFUSER_DIST])
    return Facts(
        python=(sys.version_info.major, sys.version_info.minor, sys.version_info.micro),
        nvidia_smi=run_tool(
            ["nvidia-smi", "--query-gpu=driver_version,name", "--format=csv,noheader"]
        ),
        torch=torch,
        torch_cuda=cuda,
        cuda_available=available,
        cuda_error=cuda_error,
        nvfuser=nvfuser,
        thunder=thunder,
        thunder_nvfuser=usable,
        thunder_note=note,
        asv=_import("asv", ["asv"]),
        pynvml=_import("pynvml", ["nvidia-ml-py", "pynvml"]),
        lock=probe_lock(env.get(LOCK_ENV) or DEFAULT_LOCK),
        git=run_tool(["git", "--version"], timeout=10),
        flock=run_tool(["flock", "--version"], timeout=10),
        calibrated=read_models(),
    )


def main(
    write: Callable[[str], object] = print, look: Callable[[], Facts] | None = None
) -> ExitCode:
    """Probe (``look``, default ``probe``), judge, print; the exit code says what is missing."""
    findings = explain((look or probe)())
    write(render(findings))
    return exit_code(findings)
