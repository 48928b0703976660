"""data/raw-logs.sh: the raw logs of the recorded data sets travel packed (the checkout and .gpu/
share the GPU call's 64 MiB), nothing a test reads is packed, and unpacking puts every log back
byte for byte where its README names it."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from pathlib import Path

from paths import DATA, REPO_ROOT

ARCHIVES = sorted(DATA.rglob("raw-logs.tar.xz"))
KEEP = {
    line
    for line in (DATA / "raw-logs.keep").read_text(encoding="utf-8").splitlines()
    if line and not line.startswith("#")
}


def test_an_archive_holds_only_logs_none_kept_and_none_also_lying_unpacked() -> None:
    assert ARCHIVES
    for archive in ARCHIVES:
        with tarfile.open(archive) as tar:
            names = tar.getnames()
        assert names and all(n.endswith(".log") or n.startswith("commits") for n in names)
        assert all("/" not in n for n in names), archive  # each beside the archive
        for name in names:
            path = (archive.parent / name).relative_to(REPO_ROOT).as_posix()
            assert path not in KEEP and not (archive.parent / name).exists(), path
    assert all((REPO_ROOT / path).is_file() for path in KEEP), "a kept log is missing"


def test_unpacking_puts_each_log_back_and_packing_again_gives_the_same_archive(
    tmp_path: Path,
) -> None:
    archive = DATA / "h200-single-call" / "logs" / "raw-logs.tar.xz"
    root = tmp_path / "repo"
    (root / "data" / "h200-single-call").mkdir(parents=True)
    shutil.copy(DATA / "raw-logs.sh", root / "data" / "raw-logs.sh")
    shutil.copy(DATA / "raw-logs.keep", root / "data" / "raw-logs.keep")
    shutil.copytree(archive.parent, root / "data" / "h200-single-call" / "logs")
    script = ["bash", str(root / "data" / "raw-logs.sh")]
    subprocess.run([*script, "unpack"], check=True, capture_output=True)
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            unpacked = root / "data" / "h200-single-call" / "logs" / member.name
            got = tar.extractfile(member)
            assert got is not None and unpacked.read_bytes() == got.read()
    (root / "data" / "h200-single-call" / "logs" / "raw-logs.tar.xz").unlink()
    subprocess.run([*script, "pack"], check=True, capture_output=True)
    again = root / "data" / "h200-single-call" / "logs" / "raw-logs.tar.xz"
    assert again.read_bytes() == archive.read_bytes()
