"""Where a job's measuring processes keep what the compilers produced, so the next process
reuses it: nvFuser's kernel cache and a persistent inductor cache (issue 39, part 3).

    eval "$(python3 -m benchmarks.engine.caches ROOT)"

prints the ``export`` lines a measuring process runs under:

- ``NVFUSER_ENABLE`` gains ``kernel_db``: nvFuser keeps each kernel's CUDA source and cubin in
  ``$TMPDIR/nvfuser_kernel_db`` and reuses a cubin whose source and compile arguments are
  identical (NVRTC skipped). ``TMPDIR`` is set to ``ROOT/nvfuser-<key>``, the key a digest of
  the nvFuser build (every file of the installed ``nvfuser_direct`` and ``nvfuser_common``
  packages: a PR that rebuilds nvFuser has another key, so it starts from an empty cache and
  cannot reuse its base's kernels) and of the GPU driver (``/proc/driver/nvidia/version``).
- ``TORCHINDUCTOR_CACHE_DIR`` (and Triton's, inside it) is ``ROOT/inductor-<key>``, keyed by the
  torch build (its shared objects' sizes and times) and driver: the torch.compile context
  variant's graphs and kernels.

Nothing here imports torch or nvFuser (the point is to start fast): packages are found by
``importlib.util.find_spec``, which does not run them. Why a root per job and not per host: a
cache written by one PR's code and read by the next job would let an untrusted head leave
kernels for a later base (bench-pr.yml gives each job its own root).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shlex
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

#: The packages whose files make an nvFuser build (the Python bindings and the C++ library).
NVFUSER_PACKAGES = ("nvfuser_direct", "nvfuser_common")
TORCH_PACKAGES = ("torch",)
DRIVER_FILE = Path("/proc/driver/nvidia/version")
#: Files whose bytes go into a key; a package's Python sources and data need not (they are many,
#: and a rebuild changes its shared objects).
KEYED_SUFFIXES = (".so",)


def package_dirs(names: Iterable[str]) -> list[Path]:
    """The installed folders of these packages (those that are installed), as Python would
    import them now (PYTHONPATH overlays included)."""
    found = []
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            found += [Path(p) for p in spec.submodule_search_locations]
    return found


def build_key(dirs: Iterable[Path], driver: str, content: bool = True) -> str:
    """A short digest of every shared object under ``dirs`` (its path in its package, and its
    bytes, or with ``content`` False its size and modification time) and the driver text.

    nvFuser's key reads the bytes (a rebuild of the same version must miss); torch's reads the
    files' sizes and times only (about 2 GB of shared objects; inductor keys its own entries by
    torch's code anyway, so its folder only keeps builds apart)."""
    digest = hashlib.sha256(driver.encode())
    for root in dirs:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            if not path.name.endswith(KEYED_SUFFIXES) and ".so." not in path.name:
                continue
            digest.update(f"{root.name}/{path.relative_to(root)}\0".encode())
            if not content:
                stat = path.stat()
                digest.update(f"{stat.st_size} {stat.st_mtime_ns}\0".encode())
                continue
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()[:16]


def driver_text(path: Path = DRIVER_FILE) -> str:
    """The driver's version line ('' where there is none: a machine without the driver)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return ""


def cache_env(root: Path, env: Mapping[str, str], driver: str) -> dict[str, str]:
    """The variables a measuring process runs under (module docstring); an empty dict where
    nvFuser is not installed (nothing to key the cache by)."""
    nvfuser = package_dirs(NVFUSER_PACKAGES)
    if not nvfuser:
        return {}
    enable = [o for o in env.get("NVFUSER_ENABLE", "").split(",") if o]
    if "kernel_db" not in enable:
        enable.append("kernel_db")
    nvfuser_dir = root / f"nvfuser-{build_key(nvfuser, driver)}"
    torch_key = build_key(package_dirs(TORCH_PACKAGES), driver, content=False)
    inductor_dir = root / f"inductor-{torch_key}"
    return {
        "NVFUSER_ENABLE": ",".join(enable),
        "TMPDIR": str(nvfuser_dir),
        "TORCHINDUCTOR_CACHE_DIR": str(inductor_dir),
        "TRITON_CACHE_DIR": str(inductor_dir / "triton"),
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    found = cache_env(Path(argv[0]).resolve(), os.environ, driver_text())
    if not found:
        print("caches: nvFuser is not installed here: no compile cache", file=sys.stderr)
        return 0
    for folder in (found["TMPDIR"], found["TRITON_CACHE_DIR"]):
        Path(folder).mkdir(parents=True, exist_ok=True)
    for name, value in found.items():
        print(f"export {name}={shlex.quote(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
