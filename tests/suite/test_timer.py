"""The timer a record names (issue 40): every new record carries ``timer``, the method of
benchmarks/engine/timing.py, so a noise model can say what its runs were timed with and a
run timed otherwise is told so; and the name follows the method."""

from __future__ import annotations

import hashlib
import inspect
from typing import Any

import pytest

from benchmarks.engine import session, timing
from benchmarks.engine.config import SuiteConfig

#: The method's code and the name records give it, pinned together (see the test below).
METHOD = (
    timing.L2Flusher,
    timing.profile_call,
    timing.attribute,
    timing.profile_round,
    timing.profile_round_traced,
    timing.split_at_flushes,
    timing._device_events,
    timing.flush_signature,
    timing.profile_round_gpu_only,
)
PINNED = (
    "torch.profiler: CUDA activity only, a session a round, calls split at their L2 flush "
    "(traced-round, then per-call fallback), L2 flushed before each call",
    "56d95a04b619bb83",
)


def test_a_record_names_its_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session.provenance, "versions", dict)  # no torch on this machine
    flush: Any = None  # the header never flushes
    run = session.Run({"name": "NVIDIA H200"}, flush, None, None, "2026-12-01T10:00:00+00:00")
    header = session.run_header(SuiteConfig.from_env({}), run)
    assert header["timer"] == timing.TIMER


def test_a_change_of_the_timing_method_gives_it_a_new_name() -> None:
    """Fails when timing.py's method changes: name ``TIMER`` anew (records of the old method
    and the new must not read as one timer), then pin both here."""
    source = "".join(inspect.getsource(part) for part in METHOD)
    assert (timing.TIMER, hashlib.sha256(source.encode()).hexdigest()[:16]) == PINNED
