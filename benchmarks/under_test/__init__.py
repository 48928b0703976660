"""Measure base and head of one *package under test* (Thunder or nvFuser), not of this repository.

Upstream pull requests change Thunder or nvFuser, not this suite: each side installs its own
build of that one package into an overlay of its own (``pip install --no-deps --target``, put
first on ``PYTHONPATH``), the rest of the stack is the runner's and must resolve identically on
both sides, and this repository's suite runs at one fixed commit for both. asv keys results by a
commit of the repository it reads, so each side gets a *key* in a small git repository of keys:
the package's own commit for a git spec (fetched with its real hash and date), or a commit made
deterministically from the installed distribution for a wheel or a version (docs/WORKFLOWS.md).

Run it with ``python3 -m benchmarks.under_test --help``. Nothing here imports torch: asv imports
every module under benchmarks/ when it discovers the suite.
"""
