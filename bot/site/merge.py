"""Several results folders as the one folder ``asv publish`` reads.

asv publishes one ``results_dir``. The history is kept in several (one per lab call, one per
nightly, a store's folders), so the build copies them into one staging folder first; the
folders given are never written. What cannot be merged is refused, never resolved by a guess:

- the same commit on the same machine in two folders with different results (or provenance):
  two measurements under one key, and asv would silently draw one of them;
- ``benchmarks.json`` defining one benchmark differently (another version or parameters): asv
  drops every result whose benchmark version is not the one in ``benchmarks.json``
  (asv/results.py ``get_result_keys``), which would lose one folder's history without a word.

One machine name is one machine of the history. Each lab call is a fresh host of the same
kind, and asv copies the host's description (``machine.json``: its RAM total, which differs by
a few MB between H200 hosts) into every results file's ``params``, from which it keys its
graphs: published as they are, one machine's history would split into one graph per host. The
interpreter asv ran under (``params["python"]``) splits graphs the same way, and it names where
asv *stored* a run, not where it was measured: the nightly sweep's shards are merged and
stored on a CPU machine (benchmarks/shards). So the description of the folder holding most of
the machine's results (the newest among equals) is published, and in the staging copy of a
results file whose description differs from it, those ``params`` (never a measured value,
sample or date) are set to the published one; the build report names the machine and the
values.
Provenance records, which hold the host's real GPU and clocks, are copied byte for byte.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.results.asv_file import read_json
from bot.results.folders import machine_dirs, results_files
from bot.results.limits import full_sha
from bot.results.types import BadInput


@dataclass(frozen=True)
class Merged:
    results: Path
    warnings: tuple[str, ...]


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(f"{path}: unreadable: {exc}") from None


def merge_params(lists: Sequence[Sequence[Sequence[str]]]) -> list[list[str]]:
    """Each parameter's values, united: the longest list's order, then the others' new values
    (asv maps each results file onto them by value: asv/results.py ``_compatible_results``)."""
    out: list[list[str]] = []
    for axis in range(max(len(p) for p in lists)):
        values = sorted((list(p[axis]) for p in lists if axis < len(p)), key=len, reverse=True)
        merged = list(values[0])
        merged += [v for other in values[1:] for v in other if v not in merged]
        out.append(list(dict.fromkeys(merged)))
    return out


def merge_benchmarks(found: Sequence[tuple[Path, dict[str, Any]]]) -> dict[str, Any]:
    """The union of every folder's ``benchmarks.json`` (pure). A benchmark in several must be
    the same benchmark (code version, parameter names, unit...); only its parameter values may
    differ, as a run of another size set measures other shapes, and are united."""
    out: dict[str, Any] = {}
    where: dict[str, Path] = {}
    for path, benchmarks in found:
        for name, bench in benchmarks.items():
            if name not in out:
                out[name], where[name] = bench, path
                continue
            if not isinstance(bench, dict) or not isinstance(out[name], dict):
                if bench != out[name]:
                    raise BadInput(f"{path}: {name} differs from {where[name]}'s")
                continue
            mine = out[name]
            diff = sorted(
                k for k in set(bench) | set(mine) if k != "params" and bench.get(k) != mine.get(k)
            )
            if diff:
                raise BadInput(
                    f"{path}: defines {name} unlike {where[name]} ({', '.join(diff)} differ): "
                    "asv would drop one folder's results of it; publish them separately"
                )
            if bench.get("params") != mine.get("params"):
                params = merge_params([mine.get("params", []), bench.get("params", [])])
                out[name] = {**mine, "params": params}
    return out


def _scan(mdir: Path) -> tuple[tuple[int, int, str | None], dict[str, list[Path]]]:
    """One machine folder, each results file parsed once: its weight (how many results it
    holds, its newest date, and the interpreter asv ran under for that newest one: the folder
    with the most results describes the machine), and each commit's results file(s) and
    sidecars by full hash."""
    files: dict[str, list[Path]] = {}
    count = 0
    newest: tuple[int, str | None] | None = None  # the first of the latest date wins
    for path in results_files(mdir):
        found = read_json(path)
        count += 1
        sha = full_sha(found.get("commit_hash"), str(path))
        sidecar = mdir / f"{sha}.provenance.jsonl"
        files.setdefault(sha, []).extend([path, *([sidecar] if sidecar.is_file() else [])])
        date = found.get("date")
        if isinstance(date, int) and (newest is None or date > newest[0]):
            python = found.get("params", {}).get("python")
            newest = (date, python if isinstance(python, str) else None)
    return (count, *(newest or (0, None))), files


def merge_results(dirs: Sequence[Path], dest: Path) -> Merged:
    """Copy ``dirs`` into ``dest`` (made here) as one asv results folder."""
    benchmarks = merge_benchmarks([(d, _json(d / "benchmarks.json")) for d in dirs])
    dest.mkdir(parents=True)
    (dest / "benchmarks.json").write_text(json.dumps(benchmarks, indent=4), encoding="utf-8")
    owner: dict[tuple[str, str], tuple[Path, dict[str, bytes]]] = {}
    machines: dict[str, list[tuple[tuple[int, int, str | None], Path]]] = {}
    for d in dirs:
        for mdir in machine_dirs(d):
            weight, commits = _scan(mdir)
            machines.setdefault(mdir.name, []).append((weight, mdir / "machine.json"))
            for sha, files in commits.items():
                content = {p.name: p.read_bytes() for p in files}
                key = (mdir.name, sha)
                if key in owner and owner[key][1] != content:
                    raise BadInput(
                        f"{d}: commit {sha} on machine {mdir.name} is also in "
                        f"{owner[key][0]} with different results: two measurements under one "
                        "commit; pass only one of them"
                    )
                owner.setdefault(key, (d, content))
    hosts: dict[str, dict[str, Any]] = {}
    for machine, found in machines.items():
        (dest / machine).mkdir()
        weight, kept = max(found, key=lambda item: item[0][:2])
        shutil.copyfile(kept, dest / machine / "machine.json")
        info = _json(kept)
        hosts[machine] = {
            k: v for k, v in (info if isinstance(info, dict) else {}).items() if k not in _OWN
        }
        if weight[2] is not None:
            hosts[machine]["python"] = weight[2]
    changed: dict[str, dict[str, set[str]]] = {}
    for (machine, _), (_, content) in sorted(owner.items()):
        for name, data in content.items():
            if name.endswith(".json"):
                data = one_host(data, hosts[machine], changed.setdefault(machine, {}))
            (dest / machine / name).write_bytes(data)
    warnings = [
        f"machine {machine}: its results come from hosts described differently ("
        + "; ".join(f"{k}: {', '.join(sorted(v))}" for k, v in sorted(diff.items()))
        + "); published as one machine, described as in the folder with most of its results ("
        + ", ".join(f"{k} {v}" for k, v in sorted(hosts[machine].items()))
        + ")"
        for machine, diff in sorted(changed.items())
        if diff
    ]
    return Merged(dest, tuple(warnings))


#: machine.json keys that are not the host's description.
_OWN = {"machine", "version"}


def one_host(data: bytes, host: Mapping[str, Any], seen: dict[str, set[str]]) -> bytes:
    """A results file with its host description (``params``) set to ``host``; unchanged bytes
    when it already is. ``seen`` collects every value that was replaced, and the new one."""
    results = json.loads(data)
    params = results.get("params") if isinstance(results, dict) else None
    if not isinstance(params, dict):
        return data
    differ = {k: v for k, v in host.items() if k in params and params[k] != v}
    if not differ:
        return data
    for key, value in differ.items():
        seen.setdefault(key, set()).update({str(params[key]), str(value)})
        params[key] = value
    return json.dumps(results).encode("utf-8")
