"""Attributing GPU activities of one profiled round to the calls that launched them."""

from __future__ import annotations

from benchmarks.engine.timing import DeviceEvent, Window, attribute

WINDOWS = [Window("nvfuser", 100.0, 200.0), Window("thunder-prims", 300.0, 400.0)]


def test_events_go_to_the_window_they_start_in() -> None:
    events = [
        DeviceEvent("flush", 50.0, 20.0),
        DeviceEvent("nvfuser_k1", 110.0, 30.0),
        DeviceEvent("nvfuser_k2", 150.0, 10.0),
        DeviceEvent("flush", 250.0, 20.0),
        DeviceEvent("thunder_k1", 310.0, 40.0),
    ]
    got = attribute(WINDOWS, events, expected_outside=2)
    assert got is not None
    assert got["nvfuser"].kernel_us == 40.0
    assert got["nvfuser"].names == ("nvfuser_k1", "nvfuser_k2")
    assert got["thunder-prims"].kernel_us == 40.0


def test_an_unexpected_activity_outside_the_windows_is_not_trusted() -> None:
    events = [
        DeviceEvent("flush", 50.0, 20.0),
        DeviceEvent("nvfuser_k1", 110.0, 30.0),
        DeviceEvent("stray", 220.0, 5.0),
        DeviceEvent("flush", 250.0, 20.0),
        DeviceEvent("thunder_k1", 310.0, 40.0),
    ]
    assert attribute(WINDOWS, events, expected_outside=2) is None


def test_a_window_that_caught_nothing_is_not_trusted() -> None:
    events = [
        DeviceEvent("flush", 50.0, 20.0),
        DeviceEvent("flush", 250.0, 20.0),
        DeviceEvent("nvfuser_k1", 110.0, 30.0),
    ]
    assert attribute(WINDOWS, events, expected_outside=2) is None


def test_overlapping_windows_are_not_trusted() -> None:
    overlapping = [Window("a", 0.0, 100.0), Window("b", 50.0, 150.0)]
    assert attribute(overlapping, [DeviceEvent("k", 60.0, 1.0)], expected_outside=0) is None
