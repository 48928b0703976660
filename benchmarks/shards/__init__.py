"""The nightly sweep in resumable shards (python3 -m benchmarks.shards)."""
