"""Root-cause hints: what changed inside the fusion, and which repository most likely owns it.

The suite's capture (benchmarks/engine/capture.py) leaves, per point and variant, the
nvFuser definitions, Thunder's traces, the saved tensors and nvFuser's own profile. This package
reads them (read.py), compares them (compare.py: Thunder against the hand-written fusion, head
against base), attributes the change (attribute.py) and writes the reproducer (repro.py). All
pure but the reading.
"""
