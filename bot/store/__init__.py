"""The history store: where nightly and main-branch results accumulate (docs/STORE.md).

A ``perf-results`` branch of this repository holding asv results folders (one a machine), each
stored run's asv file, provenance record and runner checks, and an index; bounded by a policy
(bot/store/policy.py, pure) that strips and retires old runs but never a pinned commit.
Modules: index (index.json, pins.txt), files (reading and fingerprinting a run), add, thin,
git (one commit a change, bounded history), create, estimate (the size figures).
"""
