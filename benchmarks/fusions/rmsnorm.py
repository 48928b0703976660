"""RMSNorm, forward and backward. The backward is the suite's first fusion and keeps every
key, file and figure it had (its math lives in benchmarks/rmsnorm_bwd/model.py); the forward
is written here from the same math."""

from __future__ import annotations

from typing import Any

from ..rmsnorm_bwd import model
from .spec import (
    Fusion,
    Math,
    Tensor,
    cols_b,
    matrix,
    output,
    rmean,
    rows_b,
    scalar,
    upcast,
    vector,
)


def _inputs(m: int, n: int, dtype_name: str, seed: int) -> dict[str, Tensor]:
    # The backward's draw order (x, grad, weight) is the one its recorded data were made with.
    from ..rmsnorm_bwd.config import Shape

    return model.make_inputs(Shape(m, n), dtype_name, seed)


def _define_forward(fd: Any, dtype_name: str) -> None:
    """y = w * x / sqrt(mean_N(x^2) + eps), fp32 inside."""
    x = upcast(fd, matrix(fd, dtype_name), dtype_name)
    w = upcast(fd, vector(fd, dtype_name), dtype_name)
    mean_sq = rmean(fd, fd.ops.mul(x, x), 1)
    inv_rms = fd.ops.rsqrt(fd.ops.add(mean_sq, scalar(fd, model.EPS)))
    y = fd.ops.mul(fd.ops.mul(x, rows_b(fd, inv_rms, x)), cols_b(fd, w, x))
    output(fd, dtype_name, y)


MATH = Math(_inputs, model.rmsnorm_prims, model.rmsnorm_func, ("x", "weight"))

FORWARD = Fusion(
    name="rmsnorm_fwd",
    title="RMSNorm forward",
    direction="forward",
    math=MATH,
    define=_define_forward,
    fusion_args=lambda i: [i["x"], i["weight"]],
    # reads x and weight, writes y
    bytes_moved=lambda m, n, s: s * (2 * m * n + n),
)


def _backward_bytes(m: int, n: int, itemsize: int) -> int:
    from ..rmsnorm_bwd.config import Shape, bytes_moved

    return bytes_moved(Shape(m, n), itemsize)


BACKWARD = Fusion(
    name="rmsnorm_bwd",
    title="RMSNorm backward",
    direction="backward",
    math=MATH,
    define=model.define_backward_fusion,
    fusion_args=lambda i: [i["x"], model.saved_rms(i["x"]), i["grad"], i["weight"]],
    bytes_moved=_backward_bytes,
    grad_inputs=("x", "weight"),
    size_group="rmsnorm_bwd",  # its sets are benchmarks/size_sets.toml's top-level ones
)
