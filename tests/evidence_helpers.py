"""A noise model's evidence (noise/<machine>.evidence.toml), read strictly and re-run.

A model perfbot.toml names is accepted with the committed A/A runs it was fitted on, so that
nobody has to trust a number nobody can re-derive (docs/CALIBRATION.md, "Onboarding a GPU
kind"). The manifest lists, per `python -m bot noise` command, its results folders (relative to
the repository root, one `--results` each, in order): the first writes the model, each later one
extends it (`--extend`); the held-out check, `python -m bot calibrate`, runs on the first's
runs. .github/scripts/calibration-evidence.sh writes one for a new kind; the H200's is written
by hand. Here, beside the tests that use it (tests/decide/test_evidence.py on the repository,
tests/workflows/test_calibrate_walk.py on a second kind's layout), the commands are rebuilt
from the manifest and run in this process, from the root the manifest is relative to.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paths import working_directory

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: A results folder: relative, plain names, no `..` (the manifest names committed data only).
FOLDER = re.compile(r"(?!.*(^|/)\.\.?(/|$))[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*")
MACHINE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


@dataclass(frozen=True)
class Evidence:
    """The runs behind one model: each fit's results folders, in the order given."""

    machine: str
    fits: tuple[tuple[str, ...], ...]

    def noise_commands(self, model: str) -> list[list[str]]:
        """The `python -m bot` arguments of each fit, writing (and extending) ``model``."""
        out = []
        for i, folders in enumerate(self.fits):
            extend = ["--extend", model] if i else []
            out.append(["noise", *_results(folders), *extend, "--write-model", model])
        return out

    def calibrate_command(self, model: str) -> list[str]:
        """The held-out check: the first fit's runs, each left out of the model it judges; it
        marks in ``model`` the fusions whose own calibration falls short (provisional)."""
        return ["calibrate", *_results(self.fits[0]), "--mark-model", model]


def _results(folders: tuple[str, ...]) -> list[str]:
    return [arg for folder in folders for arg in ("--results", folder)]


def evidence_path(model: Path) -> Path:
    """noise/<machine>.json -> noise/<machine>.evidence.toml, beside it."""
    return model.with_name(f"{model.stem}.evidence.toml")


def parse_evidence(data: Mapping[str, Any], source: str) -> Evidence:
    """Unknown keys, an empty fit, an absolute or `..` folder are refused: the manifest is
    what a reviewer reads to know what was run, so it says nothing it does not mean."""
    if set(data) != {"machine", "noise"}:
        raise ValueError(f"{source}: want the keys machine and noise, got {sorted(data)}")
    machine, fits = data["machine"], data["noise"]
    if not isinstance(machine, str) or not MACHINE.fullmatch(machine):
        raise ValueError(f"{source}: machine must be a plain name")
    if not isinstance(fits, list) or not fits:
        raise ValueError(f"{source}: noise must be one [[noise]] table or more")
    out = []
    for i, fit in enumerate(fits):
        folders = fit.get("results") if isinstance(fit, dict) else None
        if set(fit) != {"results"} or not isinstance(folders, list) or not folders:
            raise ValueError(f"{source}: noise[{i}] must hold results, a list of folders")
        for folder in folders:
            if not isinstance(folder, str) or not FOLDER.fullmatch(folder):
                raise ValueError(f"{source}: noise[{i}]: {folder!r} is not a relative folder")
        out.append(tuple(folders))
    return Evidence(machine, tuple(out))


def read_evidence(path: Path) -> Evidence:
    return parse_evidence(tomllib.loads(path.read_text(encoding="utf-8")), str(path))


def bot_in(root: Path, *args: str, env: Mapping[str, str] | None = None) -> tuple[int, str]:
    """``python -m bot ARGS`` run from ``root`` (its perfbot.toml the default configuration),
    in this process, with ``env`` alone: the exit code, and what it printed."""
    from bot.commands.cli import main

    out = io.StringIO()
    with working_directory(root), contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(args), env=dict(env or {}))
    return code, out.getvalue()


def refit(root: Path, evidence: Evidence, out: Path) -> dict[str, Any]:
    """The model the evidence gives: its fits run from ``root`` with the real command line and
    root's perfbot.toml, written to ``out`` (never over the committed file)."""
    for argv in evidence.noise_commands(str(out)):
        code, printed = bot_in(root, *argv)
        assert code == 0, printed
    loaded: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return loaded


def held_out(root: Path, evidence: Evidence, model: Path, tmp: Path) -> tuple[list[str], Any]:
    """What the held-out check of the evidence misses (bot/decide/calibration.py `missed`), and
    the fusions it marks provisional in a copy of ``model`` (the committed file is not
    touched): minutes on a laptop's two cores, so its tests are slow ones."""
    copy, out = tmp / model.name, tmp / "calibrate.json"
    copy.write_bytes(model.read_bytes())
    code, printed = bot_in(root, *evidence.calibrate_command(str(copy)), "--json", str(out))
    assert code == 0, printed
    missed: list[str] = json.loads(out.read_text(encoding="utf-8"))["missed"]
    return missed, json.loads(copy.read_text(encoding="utf-8")).get("provisional", {})
