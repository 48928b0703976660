"""The job's compile caches (benchmarks/engine/caches.py, issue 39 part 3): a folder keyed by
the nvFuser build and the driver, so a head that rebuilds nvFuser starts from an empty cache."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from benchmarks.engine import caches


def _package(root: Path, name: str, so_bytes: bytes) -> Path:
    pkg = root / name
    (pkg / "lib").mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise ImportError('never imported to find it')\n")
    (pkg / "lib" / "libcodegen.so").write_bytes(so_bytes)
    os.utime(pkg / "lib" / "libcodegen.so", ns=(10**18, 10**18))  # two builds, one time
    (pkg / "notes.txt").write_text("not part of the key")
    return root


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Installs fake nvFuser builds on sys.path, one at a time (PYTHONPATH overlays do the same)."""

    def install(tag: str, so_bytes: bytes) -> None:
        root = tmp_path / tag
        for name in caches.NVFUSER_PACKAGES:
            _package(root, name, so_bytes + name.encode())
        monkeypatch.syspath_prepend(str(root))
        for name in caches.NVFUSER_PACKAGES:
            sys.modules.pop(name, None)

    return install


def test_the_same_build_and_driver_share_a_folder_and_another_build_misses(
    installed, tmp_path: Path
) -> None:
    installed("base", b"\x7fELF build 1")
    base = caches.cache_env(tmp_path / "cache", {}, "NVRM version: 580.159.04")
    again = caches.cache_env(tmp_path / "cache", {}, "NVRM version: 580.159.04")
    other_driver = caches.cache_env(tmp_path / "cache", {}, "NVRM version: 590.1")
    installed("head", b"\x7fELF build 2")  # same names, sizes and version: other bytes
    head = caches.cache_env(tmp_path / "cache", {}, "NVRM version: 580.159.04")
    assert base["TMPDIR"] == again["TMPDIR"]
    assert len({base["TMPDIR"], other_driver["TMPDIR"], head["TMPDIR"]}) == 3
    assert Path(base["TMPDIR"]).parent == tmp_path / "cache"


def test_kernel_db_is_added_to_what_nvfuser_enable_already_says(installed, tmp_path: Path) -> None:
    installed("base", b"x")
    got = caches.cache_env(tmp_path, {"NVFUSER_ENABLE": "id_model,kernel_db"}, "")
    assert got["NVFUSER_ENABLE"] == "id_model,kernel_db"
    assert caches.cache_env(tmp_path, {}, "")["NVFUSER_ENABLE"] == "kernel_db"
    assert got["TRITON_CACHE_DIR"].startswith(got["TORCHINDUCTOR_CACHE_DIR"])


def test_without_nvfuser_there_is_no_cache_and_main_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(caches, "NVFUSER_PACKAGES", ("no_such_package_here",))
    assert caches.cache_env(tmp_path, {}, "") == {}
    assert caches.main([str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert out.out == "" and "no compile cache" in out.err


def test_main_prints_exports_a_shell_can_eval(installed, tmp_path: Path, capsys) -> None:
    installed("base", b"x")
    root = tmp_path / "job cache"  # a space: quoted
    assert caches.main([str(root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("=")[0] for line in lines] == [
        "export NVFUSER_ENABLE",
        "export TMPDIR",
        "export TORCHINDUCTOR_CACHE_DIR",
        "export TRITON_CACHE_DIR",
    ]
    assert all("'" in line for line in lines[1:])
    assert any(p.name.startswith("nvfuser-") for p in root.iterdir())
