"""A fusion's name as a person reads it (pure). The keys are the suite's
(benchmarks/fusions/catalog.py); the bot does not import the suite, so it keeps the words."""

from __future__ import annotations

from bot.results.names import FUSIONS
from bot.results.types import DEFAULT_FUSION

_MATH = {
    "rmsnorm": "RMSNorm",
    "layernorm": "LayerNorm",
    "dropout_rmsnorm": "Dropout+RMSNorm",
    "dropout_layernorm": "Dropout+LayerNorm",
    "softmax": "Softmax",
    "gelu": "Bias+GELU",
    "silu_mul": "SiLU·mul",
}
_DIRECTION = {"fwd": "forward", "bwd": "backward"}


def fusion_title(fusion: str) -> str:
    """``softmax_bwd`` -> "Softmax backward"; a name it does not know is shown as it is."""
    math, _, direction = fusion.rpartition("_")
    if math in _MATH and direction in _DIRECTION:
        return f"{_MATH[math]} {_DIRECTION[direction]}"
    return fusion


def on_fusion(fusion: str) -> str:
    """What a text adds to name a catalog fusion (" on Bias+GELU backward"); nothing for
    RMSNorm backward, whose texts are those from before the catalog."""
    return "" if fusion == DEFAULT_FUSION else f" on {fusion_title(fusion)}"


def known(fusion: str) -> bool:
    """Whether the name is one of the catalog's (bot/results/names.py): a name goes into a
    reproducer script only then."""
    return fusion in FUSIONS


def timed_call(fusion: str) -> str:
    """Which call of the fusion the suite times, and whose programs the captures hold:
    "forward" for a ``*_fwd`` fusion, else "backward" (RMSNorm backward's, the default)."""
    return "forward" if fusion.endswith("_fwd") else "backward"


def unit_key(machine: str, fusion: str) -> str:
    """What an alert section and the comment's memory name one fusion on one machine: the
    machine alone for RMSNorm backward (the keys from before the catalog), else
    ``machine:fusion``."""
    return machine if fusion == DEFAULT_FUSION else f"{machine}:{fusion}"


def unit_fusion(unit: str) -> str:
    """The fusion a unit key names (:func:`unit_key`)."""
    return unit.partition(":")[2] or DEFAULT_FUSION


def unit_machine(unit: str) -> str:
    """The machine a unit key names (:func:`unit_key`)."""
    return unit.partition(":")[0]


def unit_named(unit: str) -> str:
    """A unit key with its fusion always named: "RMSNorm backward on nvidia-h200" (a status,
    a title that names several machines)."""
    return f"{fusion_title(unit_fusion(unit))} on {unit_machine(unit)}"


def unit_words(unit: str) -> str:
    """A unit key for people: ``nvidia-h200`` stays, ``nvidia-h200:gelu_bwd`` reads "Bias+GELU
    backward on nvidia-h200"."""
    machine, _, fusion = unit.partition(":")
    return f"{fusion_title(fusion)} on {machine}" if fusion else machine
