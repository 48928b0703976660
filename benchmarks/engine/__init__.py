"""The measuring engine of every fusion of the catalog: the session and its configuration, the
variants built from a fusion's record, the timer, the checks, the captures, the provenance
record and its fingerprints. A fusion is data (benchmarks/fusions/); nothing here names one
but the default. It was benchmarks/rmsnorm_bwd/ until issue 39; asv's benchmark names and the
records' keys are unchanged.

Nothing here imports torch, nvFuser or Thunder at import time: asv discovers the suite (and CI
runs `asv check`) on machines that have none of them.
"""
