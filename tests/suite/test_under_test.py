"""``python3 -m benchmarks.under_test`` on CPU, with real parts: real pip installing tiny
wheels written here (and a git repository built by pip through its own PEP 517 backend), real
git for the repository of keys, and the real asv storing a committed H200 record under a key.

The wheels hold a ``thunder`` package of one line: they are TEST INPUTS, not Thunder
(under_test_inputs.py). Nothing here needs the network: every pip call runs with
``PIP_NO_INDEX=1``. A build that tests only read (an overlay, a git package) is installed once
for the module; a test that installs or damages gets its own. The command runs as a process of
its own for the install-only manifest and the measurement without a GPU; its other runs call
its main in this process (``command_in_process``), with pip, python and git as real as ever.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from datetime import datetime
from importlib.util import find_spec
from pathlib import Path

import pytest
from paths import DATA, REPO_ROOT, working_directory
from under_test_inputs import git, make_git_package, make_wheel, offline_env, sha256

from benchmarks.under_test import install, keys
from benchmarks.under_test.__main__ import Exit, main
from benchmarks.under_test.install import Installed, InstallError
from benchmarks.under_test.spec import PACKAGES, SpecError, parse_spec

PAIR = DATA / "h200-under-test" / "thunder-pair" / "results"
SHA = "0123456789abcdef0123456789abcdef01234567"
BASE_KEY = "977510d71561a48ab060ea5a7fbcf9cf017dbd71"
HEAD_KEY = "1361276927b1c1296a328e8150f633768722cadf"


@pytest.fixture(autouse=True)
def _offline(tmp_path: Path) -> Iterator[None]:
    """Every test offline, with a HOME of its own."""
    with offline_env(tmp_path / "home"):
        yield


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Installed]:
    """(folder, wheel, what install() returned): lightning-thunder 0.2.9 installed by real pip
    into the side folder ``folder/base``, once for the tests that only read its overlay."""
    folder = tmp_path_factory.mktemp("installed-wheel")
    with offline_env(folder / "home"):
        wheel = make_wheel(folder / "wheels", "0.2.9")
        return (
            folder,
            wheel,
            install.install(parse_spec(str(wheel), "thunder"), folder / "base", []),
        )


@pytest.fixture(scope="module")
def git_package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git repository of lightning-thunder 0.3.0.dev20260304 and its one commit (read only)."""
    return make_git_package(tmp_path_factory.mktemp("git-package") / "src", "0.3.0.dev20260304")


@pytest.fixture(scope="module")
def git_installed(
    tmp_path_factory: pytest.TempPathFactory, git_package: tuple[Path, str]
) -> Installed:
    """git_package at its commit, built and installed by real pip into the side ``head``."""
    repo, commit = git_package
    folder = tmp_path_factory.mktemp("git-installed")
    spec = parse_spec(f"git+file://{repo}@{commit}", "thunder")
    with offline_env(folder / "home"):
        return install.install(spec, folder / "head", [])


# --- 1. specs ---------------------------------------------------------------------------------


def test_each_kind_of_spec_is_parsed() -> None:
    wheel = parse_spec("/w/x/lightning_thunder-0.2.7.dev20260201-py3-none-any.whl", "thunder")
    assert (wheel.kind, wheel.distribution, wheel.version) == (
        "wheel",
        "lightning-thunder",
        "0.2.7.dev20260201",
    )
    assert wheel.pip_target == "/w/x/lightning_thunder-0.2.7.dev20260201-py3-none-any.whl"
    assert wheel.module == "thunder"
    req = parse_spec(" lightning-thunder == 0.2.6 ", "thunder")
    assert (req.kind, req.distribution, req.version, req.pip_target) == (
        "requirement",
        "lightning-thunder",
        "0.2.6",
        "lightning-thunder == 0.2.6",
    )
    url = "https://github.com/Lightning-AI/lightning-thunder"
    g = parse_spec(f"git+{url}@{SHA}#subdirectory=src", "thunder")
    assert (g.kind, g.commit, g.url) == ("git", SHA, url)
    assert g.repository == "Lightning-AI/lightning-thunder"
    assert g.distribution is None and g.version is None
    nv_wheel = "nvfuser_cu130_torch210-0.2.36.dev20260301-cp312-cp312-manylinux_2_28_x86_64.whl"
    nv = parse_spec(nv_wheel, "nvfuser")
    assert (nv.distribution, nv.version, nv.module) == (
        "nvfuser-cu130-torch210",
        "0.2.36.dev20260301",
        "nvfuser_direct",
    )
    assert parse_spec(f"git+file:///tmp/thunder@{SHA}", "thunder").repository is None


@pytest.mark.parametrize(
    ("text", "package", "why"),
    [
        ("git+https://github.com/Lightning-AI/lightning-thunder@main", "thunder", "not pinned"),
        (f"git+https://github.com/Lightning-AI/lightning-thunder@{SHA[:12]}", "thunder", "40-hex"),
        (f"git+https://github.com/L/lightning-thunder@{SHA.upper()}", "thunder", "40-hex"),
        ("git+https://github.com/Lightning-AI/lightning-thunder", "thunder", "40-hex"),
        ("lightning-thunder>=0.2.6", "thunder", "NAME==VERSION"),
        ("lightning-thunder==0.2.*", "thunder", "NAME==VERSION"),
        ("lightning-thunder", "thunder", "NAME==VERSION"),
        ("lightning==2.6.6", "thunder", "not a distribution of thunder"),
        ("torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl", "thunder", "not a build of thunder"),
        ("lightning_thunder-0.2.6-py3-none-any.whl", "nvfuser", "not a build of nvfuser"),
        ("thunder.whl", "thunder", "not a wheel file name"),
        ("lightning-thunder==0.2.6", "torch", "choose one of thunder, nvfuser"),
    ],
)
def test_a_spec_that_names_no_exact_build_is_refused(text: str, package: str, why: str) -> None:
    with pytest.raises(SpecError, match=why.replace("*", r"\*")):
        parse_spec(text, package)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "/home/alice/wheels/lightning_thunder-0.2.6-py3-none-any.whl",
            "lightning_thunder-0.2.6-py3-none-any.whl",
        ),
        (f"git+file:///home/alice/src/thunder-fork@{SHA}", f"git+file://.../thunder-fork@{SHA}"),
        (
            f"git+https://alice:ghp_secret@github.com/alice/lightning-thunder@{SHA}#subdirectory=s",
            f"git+https://github.com/alice/lightning-thunder@{SHA}#subdirectory=s",
        ),
        (
            f"git+https://github.com/Lightning-AI/lightning-thunder@{SHA}",
            f"git+https://github.com/Lightning-AI/lightning-thunder@{SHA}",
        ),
        ("lightning-thunder==0.2.6", "lightning-thunder==0.2.6"),
    ],
)
def test_shown_never_exposes_a_local_path_or_a_token(text: str, shown: str) -> None:
    assert parse_spec(text, "thunder").shown() == shown


# --- 2. install -------------------------------------------------------------------------------


def test_a_wheel_installs_into_its_overlay_and_says_what_it_is(
    installed_wheel: tuple[Path, Path, Installed],
) -> None:
    folder, wheel, got = installed_wheel
    assert got.overlay == folder / "base" / "site"
    assert (got.distribution, got.version) == ("lightning-thunder", "0.2.9")
    assert got.sha256 == sha256(wheel) and got.vcs_commit is None
    assert Path(got.module_file) == got.overlay / "thunder" / "__init__.py"
    assert "pip" in (folder / "base" / "install.log").read_text()
    record = got.record("base")
    assert record == {
        "package": "thunder",
        "distribution": "lightning-thunder",
        "side": "base",
        "spec": "lightning_thunder-0.2.9-py3-none-any.whl",
        "kind": "wheel",
        "version": "0.2.9",
        "sha256": sha256(wheel),
        "vcs_commit": None,
        "repository": None,
    }
    # A second install into the same side is refused: each side gets a fresh overlay.
    with pytest.raises(InstallError, match="fresh overlay"):
        install.install(parse_spec(str(wheel), "thunder"), folder / "base", [])


def test_a_git_spec_is_built_by_pip_and_reads_back_its_commit(
    git_package: tuple[Path, str], git_installed: Installed
) -> None:
    _, commit = git_package
    got = git_installed
    assert (got.distribution, got.version, got.vcs_commit) == (
        "lightning-thunder",
        "0.3.0.dev20260304",
        commit,
    )
    assert got.sha256 is None
    assert Path(got.module_file).is_relative_to(got.overlay)
    assert "--no-build-isolation" in (got.overlay.parent / "install.log").read_text()


def test_a_git_spec_at_a_commit_the_repository_lacks_fails_to_install(
    tmp_path: Path, git_package: tuple[Path, str]
) -> None:
    repo, _ = git_package
    spec = parse_spec(f"git+file://{repo}@{'f' * 40}", "thunder")
    with pytest.raises(InstallError, match="pip install failed"):
        install.install(spec, tmp_path / "head", [])


def test_a_pinned_version_is_downloaded_then_installed_and_hashed(tmp_path: Path) -> None:
    index = tmp_path / "index"
    wanted = make_wheel(index, "0.2.9")
    make_wheel(index, "0.3.0")  # another version in the same index: not this side's
    args = ["--no-index", f"--find-links={index}"]
    got = install.install(parse_spec("lightning-thunder==0.2.9", "thunder"), tmp_path / "s", args)
    (downloaded,) = (tmp_path / "s" / "download").glob("*.whl")
    assert downloaded.name == wanted.name
    assert got.version == "0.2.9" and got.sha256 == sha256(downloaded) == sha256(wanted)
    assert got.record("base")["spec"] == "lightning-thunder==0.2.9"


def test_a_version_the_index_lacks_fails_to_install(tmp_path: Path) -> None:
    index = tmp_path / "index"
    make_wheel(index, "0.2.9")
    spec = parse_spec("lightning-thunder==0.2.8", "thunder")
    with pytest.raises(InstallError, match="pip download failed"):
        install.install(spec, tmp_path / "s", ["--no-index", f"--find-links={index}"])


def test_a_wheel_whose_version_differs_from_its_file_name_is_refused(tmp_path: Path) -> None:
    # pip itself installs it: the version read back from the overlay is what refuses it.
    wheel = make_wheel(tmp_path / "w", "0.2.9", file_version="0.3.0")
    with pytest.raises(InstallError, match=r"installed version 0\.2\.9, not 0\.3\.0"):
        install.install(parse_spec(str(wheel), "thunder"), tmp_path / "s", [])


def test_a_missing_wheel_file_is_refused(tmp_path: Path) -> None:
    spec = parse_spec(str(tmp_path / "lightning_thunder-0.2.9-py3-none-any.whl"), "thunder")
    with pytest.raises(InstallError, match="not found"):
        install.install(spec, tmp_path / "s", [])


def test_a_package_that_imports_from_elsewhere_than_the_overlay_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python -c`` puts its working folder ahead of PYTHONPATH: run from a Thunder checkout,
    its ``thunder/`` would be measured instead of the overlay's build."""
    wheel = make_wheel(tmp_path / "w", "0.2.9")
    checkout = tmp_path / "checkout"
    (checkout / "thunder").mkdir(parents=True)
    (checkout / "thunder" / "__init__.py").write_text("")
    spec = parse_spec(str(wheel), "thunder")
    with pytest.raises(InstallError, match="something earlier on the path shadows it"):
        install.install(spec, tmp_path / "s", [], cwd=checkout)
    # From anywhere else the check looks from where the suite runs, whatever the caller's folder.
    monkeypatch.chdir(checkout)
    assert install.install(spec, tmp_path / "t", []).version == "0.2.9"


def test_the_stack_leaves_out_the_package_under_test(
    installed_wheel: tuple[Path, Path, Installed],
) -> None:
    _, _, got = installed_wheel
    seen = install.stack(got.overlay, "thunder")
    assert "pip" in seen and "asv" in seen
    assert not [name for name in seen if PACKAGES["thunder"][1].fullmatch(name)]


# --- 3. keys ----------------------------------------------------------------------------------


def _installed(
    spec_text: str, version: str, digest: str | None, dist: str = "lightning-thunder"
) -> Installed:
    """What install() returns, for a key: key_for reads distribution, version and sha256."""
    spec = parse_spec(spec_text, "thunder")
    return Installed(spec, Path("/nowhere"), dist, version, digest, None, "/nowhere/thunder.py")


@pytest.mark.slow  # seconds of real pip, asv or bash end to end (docs/BOT.md: pytest -m slow)
def test_the_same_wheel_gets_the_same_key_and_another_wheel_another(tmp_path: Path) -> None:
    one = make_wheel(tmp_path / "a", "0.2.7.dev20260201")
    same = make_wheel(tmp_path / "b", "0.2.7.dev20260201")  # the same bytes, another folder
    other = make_wheel(tmp_path / "c", "0.2.7.dev20260201", body="# rebuilt\n")
    got = {}
    for name, wheel in (("one", one), ("same", same), ("other", other)):
        inst = install.install(parse_spec(str(wheel), "thunder"), tmp_path / name, [])
        repo = tmp_path / f"keys-{name}"  # a fresh repository of keys each
        keys.init_keys(repo)
        got[name] = keys.key_for(repo, inst)
        assert keys.commit_date(repo, got[name]) == "2026-02-01T00:00:00+00:00"
        assert git(repo, "rev-parse", f"refs/keys/{got[name]}") == got[name]
        assert git(repo, "rev-parse", "main") == git(tmp_path / "keys-one", "rev-parse", "main")
    assert got["one"] == got["same"]
    assert got["other"] != got["one"]
    assert all(len(k) == 40 for k in got.values())


def test_a_key_is_made_again_in_the_same_repository(tmp_path: Path) -> None:
    keys.init_keys(tmp_path / "keys")
    keys.init_keys(tmp_path / "keys")  # a second call keeps what is there
    inst = _installed("/w/lightning_thunder-0.2.6-py3-none-any.whl", "0.2.6", "ab" * 32)
    first = keys.key_for(tmp_path / "keys", inst)
    assert keys.key_for(tmp_path / "keys", inst) == first


@pytest.mark.parametrize(
    ("version", "date"),
    [
        ("0.2.7.dev20260201", "2026-02-01"),
        ("0.2.36.dev20260301+cu130", "2026-03-01"),
        ("0.2.6", "2000-01-01"),
        ("0.3.0.dev0", "2000-01-01"),
        ("0.2.7.dev20261399", "2000-01-01"),  # no date: git would refuse it
        ("0.2.7.dev20260230", "2000-01-01"),  # no date: git would roll it over to March 2
    ],
)
def test_a_key_is_dated_by_the_nightly_in_its_version(
    tmp_path: Path, version: str, date: str
) -> None:
    assert keys.build_date(version) == f"{date}T00:00:00+00:00"
    keys.init_keys(tmp_path / "keys")
    inst = _installed(f"/w/lightning_thunder-{version}-py3-none-any.whl", version, "cd" * 32)
    key = keys.key_for(tmp_path / "keys", inst)
    assert keys.commit_date(tmp_path / "keys", key) == f"{date}T00:00:00+00:00"


@pytest.mark.parametrize(
    ("stamp", "built", "date"),
    [
        ((2025, 10, 22, 4, 53, 50), datetime(2025, 10, 22, 4, 53, 50), "2025-10-22"),  # 0.2.6's
        ((1980, 1, 1, 0, 0, 0), None, "2000-01-01"),  # a reproducible build's: no date
    ],
)
def test_a_release_is_dated_by_its_wheel_s_build(
    tmp_path: Path, stamp: tuple[int, int, int, int, int, int], built: datetime | None, date: str
) -> None:
    """Thunder's release 0.2.6 has no date in its name: dated 2000-01-01 it read as the oldest
    build of a history of nightlies (issue 41). Its wheel's files carry the build's time."""
    wheel = tmp_path / "lightning_thunder-0.2.6-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        older = min(stamp, (2025, 1, 1, 0, 0, 0))  # the newest file gives the date
        zf.writestr(zipfile.ZipInfo("thunder/__init__.py", older), "")
        zf.writestr(zipfile.ZipInfo("thunder/__about__.py", stamp), "")
    assert install.wheel_built(wheel) == built
    assert install.wheel_built(tmp_path / "missing.whl") is None
    assert keys.build_date("0.2.6", install.wheel_built(wheel)) == f"{date}T00:00:00+00:00"
    # A nightly keeps the date in its name, whatever its files say.
    assert keys.build_date("0.2.7.dev20260201", built).startswith("2026-02-01")


def test_a_git_spec_is_keyed_by_the_package_s_own_commit(
    tmp_path: Path, git_package: tuple[Path, str], git_installed: Installed
) -> None:
    """Keyed by its commit and that commit's date, not by a date in its version (dev20260304
    would be 2026-03-04T00:00:00)."""
    _, commit = git_package
    inst = git_installed
    keys.init_keys(tmp_path / "keys")
    key = keys.key_for(tmp_path / "keys", inst)
    assert key == commit
    assert keys.commit_date(tmp_path / "keys", key) == "2026-03-04T05:06:07+00:00"
    # Held by a ref, as a made key is: not garbage to git, listed by `asv publish`.
    assert git(tmp_path / "keys", "rev-parse", f"refs/keys/{commit}") == commit


def test_the_committed_keys_are_made_again_from_the_committed_manifest(tmp_path: Path) -> None:
    """The keys the H200 run made (data/h200-under-test/thunder-pair) come back, bit for bit,
    from what its manifest says was installed: the key is a function of the build alone."""
    manifest = json.loads((PAIR / "under-test.json").read_text())
    keys.init_keys(tmp_path / "keys")
    for side, want in (("base", BASE_KEY), ("head", HEAD_KEY)):
        rec = manifest["sides"][side]
        assert rec["key"] == want
        spec = "/gpu/extra/" + rec["spec"]
        inst = _installed(spec, rec["version"], rec["sha256"], rec["distribution"])
        assert keys.key_for(tmp_path / "keys", inst) == want
        assert keys.commit_date(tmp_path / "keys", want) == rec["key_date"]
    logged = (PAIR / "logs" / "keys.txt").read_text().split()
    assert git(tmp_path / "keys", "rev-parse", "main") in logged


@pytest.mark.slow  # seconds of real pip, asv or bash end to end (docs/BOT.md: pytest -m slow)
def test_asv_stores_a_committed_record_under_its_remade_key(tmp_path: Path) -> None:
    """What the pair's store phase does, on CPU: run_gpu.sh --phase store with the repository
    of keys as asv's repository; asv's file equals the one asv wrote on the H200."""
    manifest = json.loads((PAIR / "under-test.json").read_text())
    rec = manifest["sides"]["head"]
    repo = tmp_path / "keys"
    keys.init_keys(repo)
    key = keys.key_for(repo, _installed("/x/" + rec["spec"], rec["version"], rec["sha256"]))
    assert key == HEAD_KEY
    recorded = PAIR / "rep-1" / "nvidia-h200"
    mdir = tmp_path / "results" / "nvidia-h200"
    mdir.mkdir(parents=True)
    name = f"{key}.provenance.jsonl"
    (mdir / name).write_bytes((recorded / name).read_bytes())
    store = ["bash", "benchmarks/run_gpu.sh", "--phase", "store", "--asv-repo", str(repo)]
    store += ["--commit", key, "--machine", "nvidia-h200", "--results", str(tmp_path / "results")]
    # Recorded before the catalog: RMSNorm backward alone, at the pr set of then (3 dtypes x
    # (512, 4096), (2048, 8192), (16384, 8192)), which are those points of the nightly set.
    store += ["--fusions", "rmsnorm_bwd", "--size-set", "nightly"]
    old_pr = [
        f"{d}/{s}"
        for d in ("bfloat16", "float16", "float32")
        for s in ("512x4096", "2048x8192", "16384x8192")
    ]
    done = subprocess.run(
        store,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "RMSNORM_BENCH_POINTS": ",".join(old_pr)},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (mine_path,) = mdir.glob(f"{key[:8]}-*.json")
    (theirs_path,) = recorded.glob(f"{key[:8]}-*.json")
    mine, theirs = json.loads(mine_path.read_text()), json.loads(theirs_path.read_text())
    assert mine["commit_hash"] == theirs["commit_hash"] == key
    assert mine["date"] == theirs["date"] == 1769904000000  # 2026-02-01, the key's date
    assert set(mine["results"]) == set(theirs["results"]) and theirs["results"]

    def columns(data: dict[str, object], bench: str) -> dict[str, object]:
        results = data["results"]
        assert isinstance(results, dict) and isinstance(data["result_columns"], list)
        row = dict(zip(data["result_columns"], results[bench], strict=False))
        return {c: row.get(c) for c in ("result", "params", "samples")}

    for bench in theirs["results"]:
        assert columns(mine, bench) == columns(theirs, bench), bench
    assert columns(mine, "bench_rmsnorm_bwd.RMSNormBackward.track_kernel_time")["samples"]


# --- 4. the command ---------------------------------------------------------------------------


def command(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.under_test", "--package", "thunder", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def command_in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """``command(*args)`` in this process: the function ``python3 -m benchmarks.under_test``
    calls, from the same folder, its pip, python and git children as real as ever. For a run
    that measures nothing (run_gpu.sh, the one child that writes to the inherited stderr, is
    left to the real processes above and below): one interpreter start-up less."""
    out, err = io.StringIO(), io.StringIO()
    argv = ["--package", "thunder", *args]
    with (
        working_directory(REPO_ROOT),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: --help, or arguments it refuses
            code = exc.code if isinstance(exc.code, int) else 2
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


@pytest.fixture
def two_wheels(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    yield (
        make_wheel(tmp_path / "wheels", "0.2.9"),
        make_wheel(tmp_path / "wheels", "0.3.0.dev20260315"),
    )


def test_install_only_writes_the_manifest_of_both_sides(
    tmp_path: Path, two_wheels: tuple[Path, Path]
) -> None:
    base, head = two_wheels
    results = tmp_path / "results"
    done = command(
        "--base", str(base), "--head", str(head), "--results", str(results), "--install-only"
    )
    assert done.returncode == Exit.OK, done.stderr
    manifest = json.loads((results / "under-test.json").read_text())
    assert manifest["schema"] == "perfbot-under-test/1"
    assert (manifest["package"], manifest["size_set"], manifest["repeats"]) == ("thunder", "pr", 2)
    suite = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert manifest["suite_commit"] == suite.stdout.strip()
    sides = manifest["sides"]
    assert sides["base"]["spec"] == base.name and sides["head"]["spec"] == head.name
    assert sides["base"]["sha256"] == sha256(base) and sides["head"]["sha256"] == sha256(head)
    assert (sides["base"]["version"], sides["head"]["version"]) == ("0.2.9", "0.3.0.dev20260315")
    # A release is dated by its wheel's files (the test's wheels are stamped 2020-01-01), a
    # nightly by its name: a release no longer sorts before every nightly (issue 41).
    assert (sides["base"]["key_date"], sides["head"]["key_date"]) == (
        "2020-01-01T00:00:00+00:00",
        "2026-03-15T00:00:00+00:00",
    )
    assert sides["base"]["key"] != sides["head"]["key"]
    for side in ("base", "head"):
        assert sides[side]["key"] in done.stderr
        assert sides[side]["side"] == side
    # The default work folder sits beside the results; the keys are real commits there.
    work = tmp_path / "under-test-work"
    for side in ("base", "head"):
        assert git(work / "keys", "cat-file", "-t", sides[side]["key"]) == "commit"
        assert (work / side / "site" / "thunder" / "__init__.py").is_file()
    assert manifest["stack"] == install.stack(work / "base" / "site", "thunder")
    assert "lightning-thunder" not in manifest["stack"]
    assert str(tmp_path) not in json.dumps(manifest)  # no local path in what a comment may show
    assert not list(results.glob("rep-*"))  # nothing measured


@pytest.mark.slow  # seconds of real pip, asv or bash end to end (docs/BOT.md: pytest -m slow)
def test_install_only_with_pinned_versions_from_a_local_index(tmp_path: Path) -> None:
    index = tmp_path / "index"
    base, head = make_wheel(index, "0.2.9"), make_wheel(index, "0.3.0.dev20260315")
    results = tmp_path / "results"
    done = command_in_process(
        "--base", "lightning-thunder==0.2.9", "--head", "lightning-thunder==0.3.0.dev20260315",
        "--pip-arg=--no-index", f"--pip-arg=--find-links={index}",
        "--results", str(results), "--work", str(tmp_path / "work"), "--install-only",
    )  # fmt: skip
    assert done.returncode == Exit.OK, done.stderr
    sides = json.loads((results / "under-test.json").read_text())["sides"]
    assert sides["base"]["kind"] == "requirement"
    assert sides["base"]["spec"] == "lightning-thunder==0.2.9"
    assert sides["base"]["sha256"] == sha256(base) and sides["head"]["sha256"] == sha256(head)
    for line in ("--no-index", f"--find-links={index}"):
        assert line in (tmp_path / "work" / "head" / "install.log").read_text()


@pytest.mark.slow  # seconds of real pip, asv or bash end to end (docs/BOT.md: pytest -m slow)
def test_the_same_build_on_both_sides_is_nothing_to_compare(
    tmp_path: Path, two_wheels: tuple[Path, Path]
) -> None:
    base, _ = two_wheels
    results = tmp_path / "results"
    done = command_in_process("--base", str(base), "--head", str(base), "--results", str(results))
    assert done.returncode == Exit.NOT_COMPARABLE == 5, done.stderr
    assert "same build" in done.stderr
    assert not results.exists()


def test_a_results_folder_that_holds_runs_is_refused(
    tmp_path: Path, two_wheels: tuple[Path, Path]
) -> None:
    base, head = two_wheels
    results = tmp_path / "results"
    (results / "rep-1" / "nvidia-h200").mkdir(parents=True)
    done = command_in_process("--base", str(base), "--head", str(head), "--results", str(results))
    assert done.returncode == Exit.USAGE == 2
    assert "already holds runs (rep-*)" in done.stderr
    assert not (tmp_path / "under-test-work").exists()  # nothing installed
    assert not (results / "under-test.json").exists()


@pytest.mark.parametrize(
    "head",
    [
        "lightning-thunder>=0.2.6",
        "git+https://github.com/Lightning-AI/lightning-thunder@main",
        "torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl",
    ],
)
def test_a_bad_spec_is_a_usage_error_and_nothing_is_installed(
    tmp_path: Path, two_wheels: tuple[Path, Path], head: str
) -> None:
    base, _ = two_wheels
    done = command_in_process(
        "--base", str(base), "--head", head, "--results", str(tmp_path / "results")
    )
    assert done.returncode == Exit.USAGE == 2
    assert done.stderr.startswith("under_test: ")
    assert not (tmp_path / "under-test-work").exists() and not (tmp_path / "results").exists()


def test_repeats_below_one_is_a_usage_error(tmp_path: Path, two_wheels: tuple[Path, Path]) -> None:
    base, head = two_wheels
    done = command_in_process("--base", str(base), "--head", str(head), "--repeats", "0")
    assert done.returncode == Exit.USAGE and "--repeats must be at least 1" in done.stderr


def test_a_side_that_does_not_install_is_exit_4(
    tmp_path: Path, two_wheels: tuple[Path, Path]
) -> None:
    base, _ = two_wheels
    bad = make_wheel(tmp_path / "bad", "0.2.9", file_version="0.3.0")
    done = command_in_process(
        "--base", str(base), "--head", str(bad), "--results", str(tmp_path / "r")
    )
    assert done.returncode == Exit.INSTALL_FAILED == 4
    assert "install failed" in done.stderr and "installed version 0.2.9, not 0.3.0" in done.stderr


@pytest.mark.slow  # seconds of real pip, asv or bash end to end (docs/BOT.md: pytest -m slow)
@pytest.mark.skipif(find_spec("torch") is not None, reason="torch is here: a GPU may be too")
@pytest.mark.parametrize(
    ("flag", "gpu_mib", "turns"),
    [
        ("--no-turns", "81559", False),
        ("--turns", "81559", True),  # room for four on an 80 GB card, as nvidia-smi says
        ("--turns", "40960", False),  # no room: one at a time
        ("--turns", None, False),  # no nvidia-smi: cannot tell, one at a time
    ],
)
def test_without_a_gpu_the_command_stops_with_no_gpu(
    tmp_path: Path,
    two_wheels: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    flag: str,
    gpu_mib: str | None,
    turns: bool,
) -> None:
    if gpu_mib is not None:  # nvidia-smi's stand-in: the GPU's memory (benchmarks/engine/room.py)
        smi = tmp_path / "bin" / "nvidia-smi"
        smi.parent.mkdir()
        smi.write_text(f"#!/bin/sh\necho {gpu_mib}\n", encoding="utf-8")
        smi.chmod(0o755)
        monkeypatch.setenv("PATH", f"{smi.parent}{os.pathsep}{os.environ['PATH']}")
    base, head = two_wheels
    results = tmp_path / "results"
    done = command("--base", str(base), "--head", str(head), "--results", str(results), flag)
    assert done.returncode == Exit.NO_GPU == 3, done.stderr
    assert "run_gpu.sh: no usable GPU here" in done.stderr
    assert "No module named 'torch'" in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "under_test: base repeat 1: the measurement failed (exit 3): no usable GPU here "
        "(run_gpu.sh's exit 3)"
    )
    if flag == "--turns":
        said = "turns" if turns else "one process at a time"
        assert "under_test: room: " in done.stderr and done.stderr.count(f": {said}\n") == 1
    if turns:
        # Every turn ran (they start at once) and failed alike; the first failure is told.
        assert [line for line in done.stderr.splitlines() if line.endswith(": exit 3")] == [
            f"== {side} repeat {rep}: exit 3" for rep in (1, 2) for side in ("base", "head")
        ]
    else:
        assert "head repeat" not in done.stderr  # stopped at the first run: later ones unpaired
    # Nothing was stored either way: later runs would be unpaired.
    assert (results / "under-test.json").is_file() and not list(results.glob("rep-*/*"))


def test_help_lists_every_exit_code() -> None:
    done = command_in_process("--help")
    assert done.returncode == 0
    for code in Exit:
        assert f"{code.value}  {code.name}" in done.stdout


def test_a_pip_call_past_its_time_limit_is_an_install_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hung pip (it loops for ever fetching a commit from a shallow clone) ends as an
    InstallError naming its log, not as a GPU job's whole time limit."""
    wheel = make_wheel(tmp_path / "wheels", "0.2.9")
    monkeypatch.setenv("PIP_TIMEOUT_S", "0.05")  # less than pip's own start-up
    with pytest.raises(install.InstallError, match=r"pip install took more than 0 s; see .*"):
        install.install(parse_spec(str(wheel), "thunder"), tmp_path / "base", [])
