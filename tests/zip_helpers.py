"""Zips that cannot be unpacked, as an attacker would upload them (fetch-artifact's tests and
the attack table, tests/workflows/attacks.py, share them)."""

from __future__ import annotations

import io
import zipfile


def tampered(kind: str) -> bytes:
    """A real zip of 20 good files then one broken one: its encrypted flag set (in both the
    local header and the central directory), or its deflated bytes corrupted."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(20):
            z.writestr(f"results/rep-1/h200/{i}.json", b"{}" * 50)
        z.writestr("results/rep-1/h200/last.json", b'{"x": 1}' * 500)
    data = bytearray(buffer.getvalue())
    local = data.rfind(b"PK\x03\x04")  # the last entry's local header
    if kind == "encrypted":
        data[local + 6] |= 0x01
        central = data.rfind(b"PK\x01\x02")
        data[central + 8] |= 0x01
    else:  # flip the deflated bytes right after the last local header's name
        name_len = int.from_bytes(data[local + 26 : local + 28], "little")
        start = local + 30 + name_len
        for i in range(start, start + 16):
            data[i] ^= 0xFF
    return bytes(data)
