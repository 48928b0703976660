"""``site build``: the asv history website of the results, self-contained and offline-safe.

Steps, each failing with a message that names it and leaving ``out_dir`` untouched:

1. read and check every results file with the bot's own reader (corrupt, truncated or
   foreign files are :class:`~bot.results.types.BadInput`, never skipped as ``asv publish`` would);
2. choose the history asv sees (bot/site/history.py) and write a temporary asv.conf.json:
   the project's, with only results_dir, html_dir and the history source replaced;
3. run the real ``asv publish`` on it, into a staging folder beside ``out_dir``;
4. vendor the CDN files, patch index.html and put the landing view (#overview) into it;
5. audit the staged site (bot/site/check.py) and only then swap it into ``out_dir``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.config import ConfigError
from bot.results.locate import list_commits, load_commit
from bot.results.types import BENCH_RATIO, REQUIRED, BadInput, CommitInfo
from bot.site import asv_history
from bot.site.check import audit
from bot.site.history import History, Mode, choose
from bot.site.overview import build_overview
from bot.site.page import patch_index
from bot.site.vendor import ASSETS, REPO_ROOT, VendorError, load_lock

#: Written into every built site; ``out_dir`` is replaced only if it is empty or has this.
MARKER = ".fusion-perfbot-site"
ASV_TIMEOUT_S = 600


class SiteBuildError(Exception):
    """asv publish failed, or the built site failed its audit; the message says which."""


@dataclass(frozen=True)
class SiteReport:
    out_dir: Path
    history: str  # "git" or "recorded"
    history_reason: str
    commits: tuple[str, ...]  # commits drawn, oldest first
    dropped: tuple[str, ...]  # results commits asv did not draw (git history only)
    machines: tuple[str, ...]
    ratio_graphs: tuple[str, ...]  # site-relative paths of the ratio's graph files
    regressions: int  # entries in regressions.json
    ratio_regressions: int  # of which for the ratio
    thresholds: Mapping[str, float | None]  # benchmark -> asv's threshold (None: detection off)
    files: int
    size_bytes: int
    warnings: tuple[str, ...]

    def lines(self) -> list[str]:
        """What the command prints."""
        out = [
            f"site: {self.out_dir} ({self.files} files, {self.size_bytes / 1e6:.2f} MB)",
            f"history: {self.history} ({self.history_reason}); {len(self.commits)} commit(s), "
            f"machines: {', '.join(self.machines) or 'none'}",
            f"ratio graphs: {len(self.ratio_graphs)}; regressions: {self.regressions} "
            f"({self.ratio_regressions} of the ratio)",
        ]
        out += [
            f"threshold {name}: {'off' if value is None else f'{value:.0%}'}"
            for name, value in self.thresholds.items()
        ]
        out += [f"dropped (not on a configured branch): {h}" for h in self.dropped]
        out += [f"warning: {w}" for w in self.warnings]
        return out


def _load_conf(conf_path: Path) -> dict[str, Any]:
    try:
        conf = json.loads(conf_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{conf_path}: cannot read asv configuration: {exc.strerror}") from None
    except ValueError as exc:
        raise ConfigError(f"{conf_path}: not JSON: {exc}") from None
    if not isinstance(conf, dict):
        raise ConfigError(f"{conf_path}: not an asv configuration (top level is not an object)")
    return conf


def check_results(results_dir: Path) -> list[CommitInfo]:
    """Every results file parsed by the bot's reader; the ratio must be among the benchmarks."""
    infos = list_commits(results_dir)
    if not infos:
        raise BadInput(f"{results_dir}: no asv results files")
    for info in infos:
        load_commit(results_dir, info.commit, info.machine, min_samples=1)
        if info.date <= 0:
            raise BadInput(f"{results_dir}/{info.machine}: commit {info.commit} has no date")
    bench_file = results_dir / "benchmarks.json"
    try:
        benchmarks = json.loads(bench_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(f"{bench_file}: asv's benchmark list is missing or corrupt: {exc}") from None
    missing = [b for b in REQUIRED if b not in benchmarks]
    if missing:
        raise BadInput(f"{bench_file}: lacks {', '.join(missing)}")
    return infos


def check_out_dir(out_dir: Path) -> None:
    """Refuse to replace anything that is not a site this command built."""
    if out_dir.is_symlink() or (out_dir.exists() and not out_dir.is_dir()):
        raise ConfigError(f"{out_dir}: exists and is not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / MARKER).is_file():
        raise ConfigError(
            f"{out_dir}: not empty and not a site built by this command ({MARKER} missing): "
            "refusing to replace it"
        )


def thresholds(
    conf: Mapping[str, Any], benchmarks: Mapping[str, Mapping[str, Any]]
) -> dict[str, float | None]:
    """The threshold asv's own regression filter applies to each benchmark (first branch),
    asked of asv's code with the entry name asv uses (``name(param, ...)@branch``); None
    where ``regressions_first_commits`` maps the benchmark to null (detection off).

    asv takes the largest threshold among all matching patterns, not the first match.
    """
    from asv.config import Config
    from asv.graph import Graph
    from asv.plugins.regressions import _GraphDataFilter

    aconf = Config()
    aconf.regressions_thresholds = dict(conf.get("regressions_thresholds", {}))
    branch = (conf.get("branches") or [None])[0]
    filt = _GraphDataFilter(aconf, None, {})
    off = [p for p, c in dict(conf.get("regressions_first_commits", {})).items() if c is None]
    out: dict[str, float | None] = {}
    for name, bench in sorted(benchmarks.items()):
        graph = Graph(name, {"branch": branch} if branch else {})
        first = [str(values[0]) for values in bench.get("params", []) if values]
        entry = f"{name}({', '.join(first)})" if first else name
        suffix = f"@{branch}" if branch else ""
        if any(re.match(p, entry + suffix) for p in off):  # as asv's _get_start_revision
            out[name] = None
        else:
            out[name] = float(filt._get_threshold(graph, bench, entry))
    return out


def threshold_notes(conf: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    """Where several ``regressions_thresholds`` patterns match one benchmark with different
    values: asv applies the largest, which silently loosens a tighter, more specific one."""
    patterns = dict(conf.get("regressions_thresholds", {}))
    notes = []
    for name in names:
        hits = {p: float(v) for p, v in patterns.items() if re.match(p, name + "(")}
        if len(set(hits.values())) > 1:
            listed = ", ".join(f"{p!r}: {v:g}" for p, v in hits.items())
            notes.append(
                f"{name}: several regressions_thresholds match ({listed}); asv applies the "
                f"largest, {max(hits.values()):g}"
            )
    return notes


def _asv_conf(
    conf: Mapping[str, Any], conf_dir: Path, results: Path, html: Path, hist: History, work: Path
) -> dict[str, Any]:
    out = dict(conf)
    out.update(results_dir=str(results), html_dir=str(html), env_dir=str(work / "env"))
    out["benchmark_dir"] = str((conf_dir / str(conf.get("benchmark_dir", "benchmarks"))).resolve())
    branch = str((conf.get("branches") or ["main"])[0])
    if hist.mode == "recorded":
        history_file = work / "history.json"
        asv_history.write_history(history_file, branch, list(hist.commits))
        out.update(repo=str(history_file), dvcs=asv_history.DVCS)
        out["plugins"] = [*conf.get("plugins", []), "." + asv_history.__name__]
    else:
        out["repo"] = str((conf_dir / str(conf.get("repo", "."))).resolve())
    return out


def run_publish(conf_file: Path, work: Path) -> list[str]:
    """The real ``asv publish``; returns its warnings. Our plugin is importable through
    PYTHONPATH, as asv's ``plugins`` key expects of any non-asv module."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    cmd = [sys.executable, "-m", "asv", "publish", "--config", str(conf_file), "--no-pull"]
    try:
        done = subprocess.run(
            cmd, cwd=work, env=env, capture_output=True, text=True, timeout=ASV_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise SiteBuildError(f"asv publish ran past {ASV_TIMEOUT_S} s") from None
    output = (done.stdout + done.stderr).splitlines()
    if done.returncode != 0:
        tail = "\n".join(output[-15:])
        raise SiteBuildError(f"asv publish exited {done.returncode}:\n{tail}")
    return [line.strip() for line in output if "··" in line or "warn" in line.lower()]


def finish(html: Path, infos: Sequence[CommitInfo]) -> None:
    """Vendor, patch, add the landing page: everything asv's own output lacks."""
    lock = load_lock()
    for entry in lock.entries:
        dest = html / entry.local_path
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ASSETS / entry.local_path, dest)
    for name in ("perfbot.css", "perfbot.js"):
        shutil.copyfile(ASSETS / name, html / name)
    variants = {i.commit: i.thunder_variant for i in infos}
    template = (ASSETS / "landing.html").read_text(encoding="utf-8")
    landing, _ = build_overview(html, template, variants)
    index = html / "index.html"
    page = patch_index(index.read_text(encoding="utf-8"), lock, landing)
    index.write_text(page, encoding="utf-8")
    (html / MARKER).write_text("built by python -m bot site build\n", encoding="utf-8")
    problems = audit(html, lock)
    if problems:
        raise SiteBuildError("the built site is not self-contained:\n" + "\n".join(problems))


def _swap(new: Path, out_dir: Path, work: Path) -> None:
    check_out_dir(out_dir)  # again: it may have changed while asv ran
    if out_dir.exists():
        out_dir.rename(work / "previous")
    new.rename(out_dir)


def _report(
    out_dir: Path, hist: History, conf: Mapping[str, Any], warnings: list[str]
) -> SiteReport:
    index = json.loads((out_dir / "index.json").read_text(encoding="utf-8"))
    regressions = json.loads((out_dir / "regressions.json").read_text(encoding="utf-8"))
    entries = regressions.get("regressions", [])
    files = [p for p in out_dir.rglob("*") if p.is_file()]
    drawn = set(index.get("revision_to_hash", {}).values())
    return SiteReport(
        out_dir=out_dir,
        history=hist.mode,
        history_reason=hist.reason,
        commits=tuple(h for h, _ in hist.commits if h in drawn),
        dropped=hist.dropped,
        machines=tuple(sorted(index.get("machines", {}))),
        ratio_graphs=tuple(
            sorted(
                p.relative_to(out_dir).as_posix()
                for p in out_dir.glob(f"graphs/**/{BENCH_RATIO}.json")
                if "summary" not in p.relative_to(out_dir).parts
            )
        ),
        regressions=len(entries),
        ratio_regressions=sum(1 for e in entries if str(e[0]).startswith(BENCH_RATIO)),
        thresholds=thresholds(conf, index.get("benchmarks", {})),
        files=len(files),
        size_bytes=sum(p.stat().st_size for p in files),
        warnings=(*warnings, *threshold_notes(conf, sorted(index.get("benchmarks", {})))),
    )


def build_site(
    results_dir: Path,
    out_dir: Path,
    *,
    conf_path: Path = Path("asv.conf.json"),
    history: Mode = "auto",
) -> SiteReport:
    """Build the site from ``results_dir`` into ``out_dir`` (replaced only when all is done).

    Raises BadInput (results), ConfigError (asv.conf.json, ``out_dir``) or SiteBuildError
    (asv publish, site_assets/ differing from its lockfile, or the audit).
    """
    results_dir, out_dir = results_dir.resolve(), out_dir.resolve()
    if not (ASSETS / "vendor.lock.json").is_file():
        raise SiteBuildError(f"{ASSETS}: the site's assets are missing (run from a checkout)")
    conf = _load_conf(conf_path)
    check_out_dir(out_dir)
    infos = check_results(results_dir)
    branches = [str(b) for b in conf.get("branches") or ["main"]]
    conf_dir = conf_path.resolve().parent
    hist = choose(history, infos, (conf_dir / str(conf.get("repo", "."))).resolve(), branches)
    if not hist.commits:
        raise BadInput(f"{results_dir}: no results commit is on {', '.join(branches)}")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".site-build-", dir=out_dir.parent))
    try:
        html = work / "html"
        conf_file = work / "asv.conf.json"
        asv_conf = _asv_conf(conf, conf_dir, results_dir, html, hist, work)
        conf_file.write_text(json.dumps(asv_conf, indent=1), encoding="utf-8")
        warnings = run_publish(conf_file, work)
        try:
            finish(html, infos)
        except VendorError as exc:
            raise SiteBuildError(f"vendoring: {exc}") from exc
        _swap(html, out_dir, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _report(out_dir, hist, conf, warnings)
