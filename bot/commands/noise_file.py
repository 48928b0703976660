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


def configured_noise_models(s: VerdictSettings) -> dict[str, NoiseModel]:
    """Every model the configuration names, by the machine each was measured on; two models
    for one machine are a usage error (which would it use?)."""
    out: dict[str, NoiseModel] = {}
    for path in s.noise_models or ((s.noise_model,) if s.noise_model else ()):
        with step(f"read noise model {path}", ExitCode.BAD_INPUT):
            model = read_noise_model(path)
        if model.machine in out:
            with step("check the noise models", ExitCode.USAGE):
                raise ValueError(f"two noise models for machine {model.machine}: name one")
        out[model.machine] = model
    return out


def configured_noise_model(s: VerdictSettings) -> NoiseModel | None:
    """The model the configuration names, read as a step of its own (None: it names none)."""
    if s.noise_model is None:
        return None
    with step(f"read noise model {s.noise_model}", ExitCode.BAD_INPUT):
        return read_noise_model(s.noise_model)
