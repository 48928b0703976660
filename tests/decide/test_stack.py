"""The stack a noise model was fitted on (bot/decide/stack.py): read from the recorded runs'
provenance, kept in the model file, compared with a run's environment (issue 40).

The shipped model's stack is checked against the records it was fitted on, read here again;
the records that differ are in-memory copies of a recorded one with one field changed, as the
test of another environment needs (never a committed file)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from paths import DATA, REPO_ROOT

from bot.commands.noise import same_code_runs
from bot.commands.noise_file import read_noise_model
from bot.decide import stack as st
from bot.decide.noise_model import extended, from_json, to_json
from bot.results.provenance import load_provenance
from bot.results.types import BadInput, Provenance

MODEL = REPO_ROOT / "noise" / "nvidia-h200.json"
#: perfbot.toml's two commands: the folders of the shipped model's runs, RMSNorm backward's and
#: the catalog's.
FOLDERS = (
    [
        DATA / "h200" / "results",
        DATA / "h200-states" / "results",
        *(DATA / "h200-repeats" / f"call-{n}" / "results" for n in (1, 2, 3, 4)),
    ],
    [DATA / "h200-catalog" / d for d in ("aa", "pair/rep-2", "aa2", "pair/rep-1")],
)


def _fitted_on() -> list[Provenance]:
    """The records of the runs the two commands pool (the noise command's own choice)."""
    runs = [r for dirs in FOLDERS for r in same_code_runs(dirs, "stock", None, 10)[0]]
    return [r.provenance for r in runs if r.provenance is not None]


def _recorded() -> Provenance:
    """A real record of the model's runs (06f650c8), for copies with one field changed."""
    commit = "06f650c87bcca99fe961d28d3bec88c38e1bfdbe"
    path = DATA / "h200" / "results" / "nvidia-h200" / f"{commit}.provenance.jsonl"
    prov = load_provenance(path, commit, per_round=False)
    assert prov is not None
    return prov


def _with(prov: Provenance, keys: tuple[str, ...], value: Any) -> Provenance:
    record = copy.deepcopy(dict(prov.record))
    table = record
    for key in keys[:-1]:
        table = table[key]
    table[keys[-1]] = value
    return Provenance(prov.path, prov.line, record)


def test_the_shipped_model_records_the_stack_of_every_run_it_was_fitted_on() -> None:
    model = read_noise_model(MODEL)
    assert model.stack is not None
    records = _fitted_on()
    commits = {*model.runs, *(c for runs in model.fusion_runs.values() for c in runs)}
    assert {p.record["commit"] for p in records} == commits
    for name in st.FIELDS:
        seen = {st.record_values(p)[name] for p in records}
        assert set(model.stack.of(name)) == seen, name
    # No committed record names its timer: the method changed under them (96ff68c, 8a3146b).
    assert model.stack.of("timer") == (None,)
    assert model.stack.of("torch") == ("2.11.0+cu130",)


def test_a_record_that_names_its_timer_gives_it() -> None:
    prov = _with(_recorded(), ("timer",), "torch.profiler: a session a round")
    assert st.record_values(prov)["timer"] == "torch.profiler: a session a round"
    assert st.record_values(_recorded())["timer"] is None
    assert st.record_values(None) == dict.fromkeys(st.FIELDS)


def test_the_recorded_runs_are_on_the_models_stack() -> None:
    model = read_noise_model(MODEL)
    assert model.stack is not None
    assert st.differences(model.stack, st.stack_of(_fitted_on())) == ()


@pytest.mark.parametrize(
    ("keys", "value", "expected"),
    [
        (("versions", "torch"), "2.10.0+cu130", st.Difference("torch", ("2.11",), ("2.10",))),
        (("gpu", "cuda"), "12.8", st.Difference("cuda", ("13.0",), ("12.8",))),
        (("gpu", "driver"), "575.57.08", st.Difference("driver", ("580",), ("575",))),
        (
            ("gpu", "name"),
            "NVIDIA H100 80GB HBM3",
            st.Difference("gpu", ("NVIDIA H200",), ("NVIDIA H100 80GB HBM3",)),
        ),
        # a patch release, a driver's minor version, other builds: the same environment
        (("versions", "torch"), "2.11.1+cu130", None),
        (("gpu", "driver"), "580.65.06", None),
        (("versions", "nvfuser"), "0.2.40", None),
        (("versions", "thunder"), "0.2.7", None),
        # what a record cannot say tells nothing
        (("gpu", "driver"), "unknown (NVML unavailable: x)", None),
        (("versions", "torch"), None, None),
    ],
)
def test_a_run_differs_in_its_environment_only(
    keys: tuple[str, ...], value: Any, expected: st.Difference | None
) -> None:
    model = read_noise_model(MODEL).stack
    assert model is not None
    run = st.stack_of([_with(_recorded(), keys, value)])
    assert st.differences(model, run) == (() if expected is None else (expected,))


def test_a_field_the_model_does_not_know_is_not_compared() -> None:
    """The shipped model's timer is unknown: a run that names its timer is not told it differs;
    a model that knows its timer is."""
    model = read_noise_model(MODEL).stack
    assert model is not None
    timed = st.stack_of([_with(_recorded(), ("timer",), "another timer")])
    assert st.differences(model, timed) == ()
    known = st.stack_of([_with(_recorded(), ("timer",), "one timer")])
    assert st.differences(known, timed) == (
        st.Difference("timer", ("one timer",), ("another timer",)),
    )


def test_runs_that_disagree_leave_every_value() -> None:
    two = st.stack_of([_recorded(), _with(_recorded(), ("versions", "torch"), "2.10.0+cu130")])
    assert two.of("torch") == ("2.10.0+cu130", "2.11.0+cu130")
    assert st.environment(two, "torch") == ("2.10", "2.11")
    some = st.stack_of([_recorded(), _with(_recorded(), ("versions", "torch"), None)])
    assert some.of("torch") == ("2.11.0+cu130", None)
    assert st.environment(some, "torch") is None  # partly unknown: not compared
    assert st.merged(two, some).of("torch") == ("2.10.0+cu130", "2.11.0+cu130", None)


def test_the_file_round_trips_and_an_old_file_loads_with_an_unknown_stack() -> None:
    data = json.loads(MODEL.read_text(encoding="utf-8"))
    model = from_json(data, "model")
    assert to_json(model) == data
    old = {k: v for k, v in data.items() if k != "stack"}
    before = from_json(old, "old model")
    assert before.stack is None and "stack" not in to_json(before)
    # Extending a model that does not record its stack: the whole stack stays unknown.
    assert extended(before, model).stack is None
    grown = extended(model, model)
    assert grown.stack == model.stack


@pytest.mark.parametrize(
    "stack",
    [
        [],
        {"torch": "2.11.0"},
        {"torch": []},
        {"torch": [""]},
        {"torch": [11]},
        {"compiler": ["gcc"]},
    ],
)
def test_a_bad_stack_in_a_model_file_is_bad_input(stack: Any) -> None:
    data = {**json.loads(MODEL.read_text(encoding="utf-8")), "stack": stack}
    with pytest.raises(BadInput, match="stack"):
        from_json(data, "model")
