"""``site build``: the asv history website of the results, self-contained and offline-safe.

Steps, each failing with a message that names it and leaving ``out_dir`` untouched:

1. read and check every results file of every results folder with the bot's own reader
   (corrupt, truncated or foreign files are :class:`~bot.results.types.BadInput`, never
   skipped as ``asv publish`` would), and merge the folders into one (bot/site/inputs.py);
2. choose the history asv sees (bot/site/history.py) and write a temporary asv.conf.json:
   the project's, with only results_dir, html_dir, show_commit_url (the site's commits page)
   and the history source replaced;
3. run the real ``asv publish`` on it, into a staging folder beside ``out_dir``;
4. vendor the CDN files, patch index.html, add the landing view (#overview), the commits page
   (#commits) and the ratio's reference line (bot/site/assemble.py);
5. audit the staged site (bot/site/check.py) and only then swap it into ``out_dir``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.config import Config, ConfigError
from bot.results.types import BENCH_RATIO, BadInput
from bot.site import asv_history
from bot.site.assemble import MARKER, AuditError, commit_kinds, commit_notes, finish
from bot.site.commits import CommitNote
from bot.site.commits_page import COMMIT_ROUTE
from bot.site.history import History, Mode, choose
from bot.site.inputs import gather
from bot.site.lockfile import ASSETS, REPO_ROOT, VendorError
from bot.site.thresholds import threshold_notes, thresholds
from bot.site.watch import changes_block, markers, read_rows

__all__ = ["MARKER", "SiteBuildError", "SiteReport", "build_site", "check_out_dir"]
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
    #: The landing view's thresholds: (ratio, kernel time) from perfbot.toml, and its source.
    colours: tuple[float, float] = (0.0, 0.0)
    colours_from: str = "defaults"
    #: Commits drawn, by what bot/site/commits.py calls them ("lab", "package-nightly", ...).
    commit_kinds: Mapping[str, int] | None = None
    nightlies: int = 0  # of them, runs of a package's nightly build

    def lines(self) -> list[str]:
        """What the command prints."""
        kinds = ", ".join(f"{n} {k}" for k, n in sorted((self.commit_kinds or {}).items()))
        out = [
            f"site: {self.out_dir} ({self.files} files, {self.size_bytes / 1e6:.2f} MB)",
            f"history: {self.history} ({self.history_reason}); {len(self.commits)} commit(s), "
            f"machines: {', '.join(self.machines) or 'none'}",
            f"commits: {kinds or 'none'}; {self.nightlies} ran a nightly build",
            f"ratio graphs: {len(self.ratio_graphs)}; regressions: {self.regressions} "
            f"({self.ratio_regressions} of the ratio)",
            f"landing colours: ratio ±{self.colours[0]:.1%}, kernel time ±{self.colours[1]:.1%} "
            f"({self.colours_from})",
        ]
        if self.thresholds and all(v is None for v in self.thresholds.values()):
            out.append("asv's step detection: off for every benchmark (the watch's changes count)")
        else:
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


def check_out_dir(out_dir: Path) -> None:
    """Refuse to replace anything that is not a site this command built."""
    if out_dir.is_symlink() or (out_dir.exists() and not out_dir.is_dir()):
        raise ConfigError(f"{out_dir}: exists and is not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / MARKER).is_file():
        raise ConfigError(
            f"{out_dir}: not empty and not a site built by this command ({MARKER} missing): "
            "refusing to replace it"
        )


def _asv_conf(
    conf: Mapping[str, Any], conf_dir: Path, results: Path, html: Path, hist: History, work: Path
) -> dict[str, Any]:
    out = dict(conf)
    out.update(results_dir=str(results), html_dir=str(html), env_dir=str(work / "env"))
    out["show_commit_url"] = COMMIT_ROUTE  # asv's links: to the commits page, never a guess
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


def _swap(new: Path, out_dir: Path, work: Path) -> None:
    check_out_dir(out_dir)  # again: it may have changed while asv ran
    if out_dir.exists():
        out_dir.rename(work / "previous")
    new.rename(out_dir)


def _report(
    out_dir: Path,
    hist: History,
    conf: Mapping[str, Any],
    warnings: Sequence[str],
    notes: Sequence[CommitNote],
    colours: tuple[tuple[float, float], str],
) -> SiteReport:
    index = json.loads((out_dir / "index.json").read_text(encoding="utf-8"))
    regressions = json.loads((out_dir / "regressions.json").read_text(encoding="utf-8"))
    entries = regressions.get("regressions", [])
    files = [p for p in out_dir.rglob("*") if p.is_file()]
    drawn = set(index.get("revision_to_hash", {}).values())
    shown = [n for n in notes if n.commit in drawn]
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
        colours=colours[0],
        colours_from=colours[1],
        commit_kinds=dict(Counter(n.kind for n in shown)),
        nightlies=sum(1 for n in shown if n.nightly),
    )


def _default_config() -> Path | None:
    return Path("perfbot.toml") if Path("perfbot.toml").is_file() else None


def build_site(
    results: Path | Sequence[Path],
    out_dir: Path,
    *,
    conf_path: Path = Path("asv.conf.json"),
    history: Mode = "auto",
    config_path: Path | None = None,
    history_json: Path | None = None,
) -> SiteReport:
    """Build the site from one or several results folders into ``out_dir`` (replaced only when
    all is done). The landing view's thresholds come from ``config_path`` (default:
    ./perfbot.toml where there is one, as for every command); ``history_json``: the watch's
    ``history --json`` output, whose changes the landing view lists first (bot/site/watch.py).

    Raises BadInput (results), ConfigError (asv.conf.json, perfbot.toml, ``out_dir``) or
    SiteBuildError (asv publish, site_assets/ differing from its lockfile, or the audit).
    """
    dirs = [Path(results)] if isinstance(results, (str, Path)) else [Path(r) for r in results]
    dirs = [d.resolve() for d in dirs]
    out_dir = out_dir.resolve()
    if not (ASSETS / "vendor.lock.json").is_file():
        raise SiteBuildError(f"{ASSETS}: the site's assets are missing (run from a checkout)")
    conf = _load_conf(conf_path)
    watch_rows = read_rows(history_json) if history_json is not None else None
    config_path = config_path if config_path is not None else _default_config()
    settings = Config.from_env({}, config_path).verdict
    colours = (settings.effect, settings.kernel_effect)
    source = str(config_path) if config_path is not None else "built-in defaults"
    check_out_dir(out_dir)
    branches = [str(b) for b in conf.get("branches") or ["main"]]
    conf_dir = conf_path.resolve().parent
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".site-build-", dir=out_dir.parent))
    try:
        inputs = gather(dirs, work / "results")
        repo = (conf_dir / str(conf.get("repo", "."))).resolve()
        hist = choose(history, inputs.infos, repo, branches)
        if not hist.commits:
            where = ", ".join(str(d) for d in dirs)
            raise BadInput(f"{where}: no results commit is on {', '.join(branches)}")
        html = work / "html"
        conf_file = work / "asv.conf.json"
        asv_conf = _asv_conf(conf, conf_dir, inputs.results, html, hist, work)
        conf_file.write_text(json.dumps(asv_conf, indent=1), encoding="utf-8")
        warnings = [*inputs.warnings, *run_publish(conf_file, work)]
        notes = commit_notes(hist, inputs, str(conf.get("show_commit_url") or ""))
        try:
            changes = changes_block(watch_rows) if watch_rows is not None else ""
            marks = markers(watch_rows) if watch_rows is not None else None
            finish(html, notes, settings, colours, changes, marks, commit_kinds(notes, inputs))
        except VendorError as exc:
            raise SiteBuildError(f"vendoring: {exc}") from exc
        except AuditError as exc:
            raise SiteBuildError(str(exc)) from exc
        _swap(html, out_dir, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _report(out_dir, hist, conf, warnings, notes, (colours, source))
