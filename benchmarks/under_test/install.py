"""Install one side's build of the package under test into an overlay, and say what it is.

The overlay holds that one distribution (``--no-deps``): everything else comes from the runner's
environment, so base and head can differ only in the package under test. What was installed is
read back from the overlay itself (its ``.dist-info``, PEP 610's ``direct_url.json``) and from a
fresh interpreter that imports the package with the overlay first on the path, because a wheel
that installs but imports from somewhere else would measure the wrong build.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from datetime import datetime
from importlib import metadata
from pathlib import Path

from benchmarks.under_test.spec import PACKAGES, Spec


class InstallError(RuntimeError):
    """A side that could not be installed, or installed something other than it asked for."""


@dataclass(frozen=True)
class Installed:
    spec: Spec
    overlay: Path
    distribution: str
    version: str
    sha256: str | None  # of the wheel installed (wheel and requirement specs)
    vcs_commit: str | None  # git specs, as pip recorded it
    module_file: str  # where the package imports from, with the overlay first
    #: When the wheel was built (its newest file's time, no zone), where a wheel was
    #: installed: a release's only date (keys.build_date), since its version carries none.
    built: datetime | None = None

    def record(self, side: str) -> dict[str, object]:
        """The ``under_test`` field of the suite's provenance record (docs/DATA.md)."""
        return {
            "package": self.spec.package,
            "distribution": self.distribution,
            "side": side,
            "spec": self.spec.shown(),
            "kind": self.spec.kind,
            "version": self.version,
            "sha256": self.sha256,
            "vcs_commit": self.vcs_commit,
            "repository": self.spec.repository,
        }


#: One pip call may take this long (PIP_TIMEOUT_S overrides): a git build compiles nothing
#: here, and pip fetching a commit from a shallow clone loops for ever (data/README.md,
#: h200-bisect-commits), which would spend a GPU job's whole time on one install.
PIP_TIMEOUT_S = 900.0


def _pip(args: list[str], log: Path) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    limit = float(os.environ.get("PIP_TIMEOUT_S") or PIP_TIMEOUT_S)
    with open(log, "a", encoding="utf-8") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        try:
            done = subprocess.run(
                cmd, stdout=fh, stderr=subprocess.STDOUT, check=False, timeout=limit
            )
        except subprocess.TimeoutExpired:
            raise InstallError(f"pip {args[0]} took more than {limit:.0f} s; see {log}") from None
    if done.returncode != 0:
        raise InstallError(f"pip {args[0]} failed (exit {done.returncode}); see {log}")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def wheel_built(wheel: Path) -> datetime | None:
    """When ``wheel`` was built: the newest date of the files in it (a wheel holds no build
    stamp of its own; Thunder's are stamped at the build, e.g. 0.2.6's 2025-10-22 04:53).
    None where the wheel is unreadable or reproducible-build dated (1980, zip's earliest)."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            newest = max((i.date_time for i in zf.infolist()), default=None)
    except (OSError, zipfile.BadZipFile):
        return None
    if newest is None or newest[0] <= 1980:
        return None
    return datetime(*newest)


def install(spec: Spec, side_dir: Path, pip_args: list[str], cwd: Path | None = None) -> Installed:
    """``pip_args`` (e.g. ``--no-index --find-links DIR``) apply to every pip call of both sides;
    ``cwd`` is where the import check looks from (default: where the suite runs)."""
    overlay = side_dir / "site"
    log = side_dir / "install.log"
    side_dir.mkdir(parents=True, exist_ok=True)
    if overlay.exists():
        raise InstallError(f"{overlay} exists: each side gets a fresh overlay (remove it first)")
    wheel: Path | None = None
    target = spec.pip_target
    if spec.kind == "wheel":
        wheel = Path(spec.pip_target)
        if not wheel.is_file():
            raise InstallError(f"wheel {spec.shown()!r} not found at {wheel}")
    elif spec.kind == "requirement":
        # Download first, so the file installed is the file hashed.
        download = side_dir / "download"
        _pip(
            [
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "--dest",
                str(download),
                *pip_args,
                target,
            ],
            log,
        )
        found = sorted(download.glob("*.whl"))
        if len(found) != 1:
            raise InstallError(f"pip download of {spec.text!r} gave {len(found)} wheels, not 1")
        wheel = found[0]
        target = str(wheel)
    extra = ["--no-build-isolation"] if spec.kind == "git" else []
    _pip(
        [
            "install",
            "--no-deps",
            "--no-compile",
            "--target",
            str(overlay),
            *extra,
            *pip_args,
            target,
        ],
        log,
    )
    dist = _one_distribution(overlay, spec)
    version = dist.version
    if spec.version is not None and spec.version != version:
        raise InstallError(f"{spec.shown()!r} installed version {version}, not {spec.version}")
    vcs_commit = _vcs_commit(dist)
    if spec.kind == "git" and vcs_commit != spec.commit:
        raise InstallError(f"pip installed commit {vcs_commit} for {spec.text!r}")
    module_file = imported_from(spec, overlay, cwd or SUITE_ROOT)
    if not Path(module_file).resolve().is_relative_to(overlay.resolve()):
        raise InstallError(
            f"{spec.module} imports from {module_file}, not from the overlay {overlay}: "
            "something earlier on the path shadows it"
        )
    return Installed(
        spec,
        overlay,
        dist.metadata["Name"],
        version,
        _sha256(wheel) if wheel else None,
        vcs_commit,
        module_file,
        wheel_built(wheel) if wheel else None,
    )


def _one_distribution(overlay: Path, spec: Spec) -> metadata.Distribution:
    pattern = PACKAGES[spec.package][1]
    dists = [d for d in metadata.distributions(path=[str(overlay)]) if d.metadata["Name"]]
    ours = [d for d in dists if pattern.fullmatch(d.metadata["Name"])]
    if len(ours) != 1 or len(dists) != 1:
        names = ", ".join(sorted(d.metadata["Name"] for d in dists)) or "nothing"
        raise InstallError(f"{spec.shown()!r} installed {names}, not one build of {spec.package}")
    return ours[0]


def _vcs_commit(dist: metadata.Distribution) -> str | None:
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    commit = json.loads(text).get("vcs_info", {}).get("commit_id")
    return str(commit) if commit else None


def overlay_env(overlay: Path, base: dict[str, str]) -> dict[str, str]:
    """The environment of a process that sees the overlay first (asv drops ``PYTHONPATH`` for
    its benchmark processes and passes ``ASV_PYTHONPATH`` on: both get it)."""
    env = dict(base)
    for var in ("PYTHONPATH", "ASV_PYTHONPATH"):
        env[var] = str(overlay) + (os.pathsep + base[var] if base.get(var) else "")
    return env


#: Where the suite's processes run (run_gpu.sh cds to the repository root): ``python -c`` puts
#: its working folder ahead of PYTHONPATH, so the checks look from there too.
SUITE_ROOT = Path(__file__).resolve().parents[2]


def _overlay_python(code: str, overlay: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        env=overlay_env(overlay, dict(os.environ)),
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def imported_from(spec: Spec, overlay: Path, cwd: Path = SUITE_ROOT) -> str:
    code = (
        f"import importlib.util as u;s = u.find_spec({spec.module!r}); print(s.origin if s else '')"
    )
    done = _overlay_python(code, overlay, cwd)
    origin = done.stdout.strip()
    if done.returncode != 0 or not origin:
        raise InstallError(
            f"{spec.module} is not importable with the overlay {overlay}: {done.stderr[-300:]}"
        )
    return origin


def stack(overlay: Path, exclude: str, cwd: Path = SUITE_ROOT) -> dict[str, str]:
    """Every distribution a process with the overlay first sees, but the package under test:
    base and head must see the same."""
    code = (
        "import json, importlib.metadata as m;"
        "print(json.dumps(sorted({(d.metadata['Name'] or '?').lower(): d.version"
        " for d in m.distributions()}.items())))"
    )
    done = _overlay_python(code, overlay, cwd)
    if done.returncode != 0:
        raise InstallError(
            f"listing the stack with the overlay {overlay} failed: {done.stderr[-300:]}"
        )
    pattern = PACKAGES[exclude][1]
    return {k: v for k, v in json.loads(done.stdout) if not pattern.fullmatch(k)}
