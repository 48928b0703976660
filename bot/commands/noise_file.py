"""Reading the noise-model file that perfbot.toml names (the model itself, pure, is
bot/decide/noise_model.py): size-capped and strictly parsed like every other input."""

from __future__ import annotations

from pathlib import Path

from bot.commands.steps import step
from bot.config import VerdictSettings
from bot.decide.noise_model import NoiseModel, from_json
from bot.exitcodes import ExitCode
from bot.results.limits import MAX_RESULTS_BYTES
from bot.results.strict_json import read_document


def read_noise_model(path: Path) -> NoiseModel:
    what = "noise model (perfbot.toml's [verdict] noise_model)"
    return from_json(read_document(path, MAX_RESULTS_BYTES, what), str(path))


def configured_noise_model(s: VerdictSettings) -> NoiseModel | None:
    """The model the configuration names, read as a step of its own (None: it names none)."""
    if s.noise_model is None:
        return None
    with step(f"read noise model {s.noise_model}", ExitCode.BAD_INPUT):
        return read_noise_model(s.noise_model)
