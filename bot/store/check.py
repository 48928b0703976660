"""``store check`` and ``store list``: the store read back as the website and the watch read it.

check: every stored run passes the bot's readers, its fingerprint is the one recorded when it
was added (a hand edit or a bad merge shows), a stripped run holds no per-call samples, and no
file under ``results/`` is left that the index does not list (a failed add, a stray copy).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.results.types import BadInput
from bot.store.files import PER_CALL, read_run
from bot.store.index import INDEX, PINS, RESULTS, read_index, read_pins
from bot.store.thin import stored_bytes


def check_store(store: Path) -> list[str]:
    index = read_index(store)
    listed: set[Path] = set()
    for e in index.rows:
        mdir = store / RESULTS / e.machine
        run = read_run(store / RESULTS, e.commit, e.machine, 1)
        if run.results_file.name != e.results_file:
            raise BadInput(f"{run.results_file}: the index names {e.results_file} for {e.commit}")
        if run.fingerprint != e.fingerprint:
            raise BadInput(
                f"{mdir}: {e.commit} is not the run the index recorded (fingerprint differs)"
            )
        if e.stripped and PER_CALL in run.provenance.read_text(encoding="utf-8"):
            raise BadInput(f"{run.provenance}: marked stripped, but holds {PER_CALL}")
        listed.update(mdir / name for name in e.files())
        listed.add(mdir / "machine.json")
    results = store / RESULTS
    on_disk = {p for p in results.rglob("*") if p.is_file()} if results.is_dir() else set()
    stray = sorted(p for p in on_disk - listed if p != results / "benchmarks.json")
    if stray:
        names = ", ".join(str(p.relative_to(store)) for p in stray[:5])
        raise BadInput(f"{store}: {len(stray)} file(s) the {INDEX} does not list: {names}")
    pins = read_pins(store / PINS)
    return [
        f"store: {store}: {len(index.rows)} run(s) on "
        f"{len({e.machine for e in index.rows})} machine(s) read back, "
        f"{len(index.retired)} retired, {len(pins)} pinned: ok"
    ]


def listing(store: Path) -> tuple[dict[str, Any], list[str]]:
    index = read_index(store)
    pins = read_pins(store / PINS)
    sizes = {e.key: stored_bytes(store, e) for e in index.rows}
    rows = [
        {
            "machine": e.machine,
            "commit": e.commit,
            "date": e.date.isoformat(),
            "bytes": sizes[e.key],
            "stripped": e.stripped,
            "pinned": e.commit in pins,
        }
        for e in index.rows
    ]
    retired = [
        {"machine": e.machine, "commit": e.commit, "date": e.date.isoformat(), "why": e.retired}
        for e in index.retired
    ]
    lines = [
        f"{e.machine} {e.commit[:12]} {e.date:%Y-%m-%d} {sizes[e.key] / 1e6:6.2f} MB"
        + (" stripped" if e.stripped else "")
        + (" pinned" if e.commit in pins else "")
        for e in index.rows
    ]
    lines += [
        f"retired {e.machine} {e.commit[:12]} {e.date:%Y-%m-%d} ({e.retired})"
        for e in index.retired
    ]
    total = sum(sizes.values())
    lines.append(f"store: {len(rows)} run(s), {total / 1e6:.1f} MB; {len(retired)} retired")
    return {
        "schema": "perfbot-store-list/1",
        "rows": rows,
        "retired": retired,
        "bytes": total,
    }, lines
