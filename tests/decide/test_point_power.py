"""Per-point power on the recorded H200 baseline: a point shifted alone is found (and named)
when the shift is large, and never when there is none."""

from __future__ import annotations

from paths import REPO_ROOT

from bot.config import Config
from bot.decide.point_power import per_point_power, report_text, to_json
from bot.results.locate import load_commit
from bot.results.types import PointKey

ROOT = REPO_ROOT


def test_a_lone_shift_is_found_at_its_point_and_nothing_without_one() -> None:
    state = load_commit(ROOT / "data" / "h200" / "results", "06f650c8")
    s = Config.from_env({}, ROOT / "perfbot.toml").verdict
    points = [
        PointKey("thunder-prims", "bfloat16", "2048x8192"),
        PointKey("thunder-func", "float32", "16384x8192"),
        PointKey("thunder-prims", "float32", "512x4096"),  # threshold 7%: noisy between runs
    ]
    rows = per_point_power(state, s, shifts=(0.0, 0.12), trials=8, only=points)
    assert [r.key for r in rows] == sorted(points)
    for row in rows:
        (_, none), (_, big) = row.power
        assert none.hits == 0 and big.hits == big.trials == 8, row
        assert row.min_shift_95 == 0.12
    assert {r.key.label: r.threshold for r in rows}["thunder-prims/float32/512x4096"] == 0.07
    text = report_text(rows)
    assert "thunder-prims/float32/512x4096" in text and "+12%" in text
    assert to_json(rows)[0]["power"] == [
        {"shift": 0.0, "hits": 0, "trials": 8},
        {"shift": 0.12, "hits": 8, "trials": 8},
    ]
