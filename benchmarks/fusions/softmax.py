"""Softmax along the hidden size, forward and backward (the backward takes the saved output,
as a forward that keeps its result for the backward does)."""

from __future__ import annotations

from typing import Any

from .spec import (
    Fusion,
    Math,
    Tensor,
    matrix,
    output,
    randn,
    rows_b,
    rsum,
    upcast,
)


def softmax_prims(x: Tensor) -> Tensor:
    """exp(x - max) / sum(exp(x - max)) from primitives."""
    shifted = x - x.amax(1, keepdim=True)
    e = shifted.exp()
    return e / e.sum(1, keepdim=True)


def softmax_func(x: Tensor) -> Tensor:
    import torch.nn.functional as F

    return F.softmax(x, dim=-1)


def _inputs(m: int, n: int, dtype_name: str, seed: int) -> dict[str, Tensor]:
    return randn(m, n, dtype_name, seed, ("x", "grad"))


def _define_forward(fd: Any, dtype_name: str) -> None:
    from nvfuser_direct import DataType

    x = upcast(fd, matrix(fd, dtype_name), dtype_name)
    row_max = fd.ops.max(x, [1], False, DataType.Null)
    e = fd.ops.exp(fd.ops.sub(x, rows_b(fd, row_max, x)))
    output(fd, dtype_name, fd.ops.div(e, rows_b(fd, rsum(fd, e, 1), x)))


def _define_backward(fd: Any, dtype_name: str) -> None:
    """grad_x = y * (g - sum_N(g * y)), y the saved softmax output."""
    y = upcast(fd, matrix(fd, dtype_name), dtype_name)
    g = upcast(fd, matrix(fd, dtype_name), dtype_name)
    dot = rows_b(fd, rsum(fd, fd.ops.mul(g, y), 1), y)
    output(fd, dtype_name, fd.ops.mul(y, fd.ops.sub(g, dot)))


MATH = Math(_inputs, softmax_prims, softmax_func, ("x",))

FORWARD = Fusion(
    name="softmax_fwd",
    title="Softmax forward",
    direction="forward",
    math=MATH,
    define=_define_forward,
    fusion_args=lambda i: [i["x"]],
    bytes_moved=lambda m, n, s: s * 2 * m * n,  # reads x, writes y
)

BACKWARD = Fusion(
    name="softmax_bwd",
    title="Softmax backward",
    direction="backward",
    math=MATH,
    define=_define_backward,
    fusion_args=lambda i: [softmax_func(i["x"]), i["grad"]],
    bytes_moved=lambda m, n, s: s * 3 * m * n,  # reads y and grad, writes grad_x
    grad_inputs=("x",),
)
