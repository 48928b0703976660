"""Have asv store a recorded measurement again, after the lab machine (and its throwaway
commit) is gone: what run_gpu.sh's store phase does, run here.

Why: the catalog's ratio benchmarks failed in asv on the H200 (a benchmark-level ``setup``
that asv calls without ``self``; fixed in benchmarks/bench_fusions.py), so asv stored null
where the ratio samples belong, while every sample stayed in the provenance record. asv's
``setup_cache`` replays that record (``RMSNORM_BENCH_REPLAY``), as it does on the GPU machine
after every measurement; the only thing this machine lacks is the lab's commit, which asv looks
up for the hash and date it files the results under: the lookup is answered from the record's
own ``commit`` and ``started_at``. No figure passes through this script.

    python data/h200-catalog/restore.py RECORD RESULTS_DIR [KEY=VALUE ...]

RECORD a ``<sha>.provenance.jsonl``, RESULTS_DIR the asv results folder to store into (its
machine folder is the record's ``machine``); KEY=VALUE set the suite's environment for the
run that made the record (``RMSNORM_BENCH_SIZES=pr``, ``RMSNORM_BENCH_POINTS=...``), so asv
declares the same points.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str]) -> int:
    record_path, results = Path(argv[0]).resolve(), Path(argv[1]).resolve()
    env = dict(kv.split("=", 1) for kv in argv[2:])
    record = json.loads(record_path.read_text().splitlines()[-1])
    sha, machine = record["commit"], record["machine"]
    started = datetime.datetime.fromisoformat(record["started_at"])
    os.environ.update(env, RMSNORM_BENCH_REPLAY=str(record_path), RMSNORM_BENCH_COMMIT=sha)
    # asv files results under the machine it knows from ~/.asv-machine.json: the H200's own
    # description, as its machine.json in the results folder has it, in a home of its own.
    home = Path(tempfile.mkdtemp())
    described = json.loads((results / machine / "machine.json").read_text())
    (home / ".asv-machine.json").write_text(json.dumps({machine: described, "version": 1}))
    os.environ["HOME"] = str(home)

    import asv.plugins.git as git
    from asv.main import main as asv_main

    lookup, date = git.Git.get_hash_from_name, git.Git.get_date
    git.Git.get_hash_from_name = lambda self, name: sha if name == sha else lookup(self, name)  # type: ignore[method-assign]
    git.Git.get_date = lambda self, h: (
        int(started.timestamp() * 1000) if h == sha else date(self, h)
    )  # type: ignore[method-assign]

    conf = json.loads((ROOT / "asv.conf.json").read_text())
    conf["results_dir"] = str(results)
    with tempfile.NamedTemporaryFile("w", suffix=".json", dir=ROOT, delete=False) as fh:
        json.dump(conf, fh)
    try:
        os.chdir(ROOT)
        sys.argv = [
            "asv",
            "run",
            "--config",
            fh.name,
            "-E",
            f"existing:{sys.executable}",
            "--set-commit-hash",
            sha,
            "--record-samples",
            "--launch-method",
            "forkserver",
            "--machine",
            machine,
            "--bench",
            r"^bench_(rmsnorm_bwd|fusions)\.",
        ]
        return int(asv_main() or 0)
    finally:
        os.unlink(fh.name)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
