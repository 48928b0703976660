"""The known-slowdown knob of the suite, on the CPU (its GPU half is in tests/gpu)."""

from __future__ import annotations

import pytest

from benchmarks.engine.config import SuiteConfig
from benchmarks.engine.slowdown import SleepFit, Slowdown, fit


def test_the_setting_names_a_side_and_a_fraction() -> None:
    assert Slowdown.parse("") is None
    thunder = Slowdown.parse("thunder:0.05")
    assert thunder == Slowdown("thunder", 0.05) and thunder.label == "thunder:0.05"
    assert thunder.applies_to("thunder-prims") and thunder.applies_to("thunder-func")
    assert not thunder.applies_to("nvfuser") and not thunder.applies_to("eager")
    nvfuser = Slowdown.parse("nvfuser:0.02")
    assert nvfuser is not None and nvfuser.applies_to("nvfuser")
    assert not nvfuser.applies_to("thunder-prims")


@pytest.mark.parametrize("text", ["thunder", "eager:0.05", "thunder:0", "thunder:1.5", "nvfuser:x"])
def test_a_bad_setting_is_refused_with_the_expected_form(text: str) -> None:
    with pytest.raises(ValueError, match=r"expected \[FUSION/\]SIDE:FRACTION"):
        Slowdown.parse(text)


def test_the_suite_config_reads_it_from_the_environment() -> None:
    cfg = SuiteConfig.from_env({"RMSNORM_BENCH_SLOWDOWN": "nvfuser:0.02"})
    assert cfg.slowdown == Slowdown("nvfuser", 0.02)
    assert SuiteConfig.from_env({}).slowdown is None


def test_the_sleep_kernel_fit_and_the_cycles_it_asks_for() -> None:
    """On the H200, about 0.55 us + 0.0005 us a cycle (../shared/NOTES.md section 6)."""
    line = fit([(0, 0.55), (2000, 1.55), (8000, 4.55), (32000, 16.55)])
    assert line.floor_us == pytest.approx(0.55) and line.us_per_cycle == pytest.approx(0.0005)
    assert line.cycles_for(2.55) == 4000
    assert line.cycles_for(0.3) == 0  # below the floor: the shortest kernel there is
    assert SleepFit(0.55, 0.0).cycles_for(5.0) == 0
    with pytest.raises(ValueError, match="two cycle counts"):
        fit([(100, 1.0), (100, 1.1)])
