"""Reading the noise-model file that perfbot.toml names (the model itself, pure, is
bot/decide/noise_model.py): size-capped and strictly parsed like every other input."""

from __future__ import annotations

from pathlib import Path

from bot.decide.noise_model import NoiseModel, from_json
from bot.results.limits import MAX_RESULTS_BYTES, read_capped
from bot.results.strict_json import decode
from bot.results.types import BadInput


def read_noise_model(path: Path) -> NoiseModel:
    raw = read_capped(path, MAX_RESULTS_BYTES, "noise model (perfbot.toml's [verdict] noise_model)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: noise model is not UTF-8 text") from None
    return from_json(decode(path, text), str(path))
