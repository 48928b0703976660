"""Bias + GELU (tanh approximation), forward and backward: the MLP's activation."""

from __future__ import annotations

import math
from typing import Any

from .spec import (
    Fusion,
    Math,
    Tensor,
    cols_b,
    matrix,
    output,
    randn,
    rsum,
    scalar,
    upcast,
    vector,
)

K = math.sqrt(2.0 / math.pi)
C = 0.044715


def gelu_prims(x: Tensor, bias: Tensor) -> Tensor:
    """0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))), z = x + bias, from primitives."""
    z = x + bias
    return 0.5 * z * (1.0 + (K * (z + C * z * z * z)).tanh())


def gelu_func(x: Tensor, bias: Tensor) -> Tensor:
    import torch.nn.functional as F

    return F.gelu(x + bias, approximate="tanh")


def _inputs(m: int, n: int, dtype_name: str, seed: int) -> dict[str, Tensor]:
    return randn(m, n, dtype_name, seed, ("x", "grad"), ("bias",))


def _define_forward(fd: Any, dtype_name: str) -> None:
    x = upcast(fd, matrix(fd, dtype_name), dtype_name)
    b = upcast(fd, vector(fd, dtype_name), dtype_name)
    z = fd.ops.add(x, cols_b(fd, b, x))
    z3 = fd.ops.mul(fd.ops.mul(z, z), z)
    t = fd.ops.tanh(fd.ops.mul(fd.ops.add(z, fd.ops.mul(z3, scalar(fd, C))), scalar(fd, K)))
    y = fd.ops.mul(fd.ops.mul(z, scalar(fd, 0.5)), fd.ops.add(t, scalar(fd, 1.0)))
    output(fd, dtype_name, y)


def _define_backward(fd: Any, dtype_name: str) -> None:
    """dy/dz = 0.5 (1 + t) + 0.5 z (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 z^2);
    grad_x = g dy/dz, grad_bias = sum_M(grad_x)."""
    x = upcast(fd, matrix(fd, dtype_name), dtype_name)
    b = upcast(fd, vector(fd, dtype_name), dtype_name)
    g = upcast(fd, matrix(fd, dtype_name), dtype_name)
    z = fd.ops.add(x, cols_b(fd, b, x))
    z2 = fd.ops.mul(z, z)
    inner = fd.ops.mul(fd.ops.add(z, fd.ops.mul(fd.ops.mul(z2, z), scalar(fd, C))), scalar(fd, K))
    t = fd.ops.tanh(inner)
    left = fd.ops.mul(fd.ops.add(t, scalar(fd, 1.0)), scalar(fd, 0.5))
    sech2 = fd.ops.sub(scalar(fd, 1.0), fd.ops.mul(t, t))
    slope = fd.ops.mul(
        fd.ops.add(fd.ops.mul(z2, scalar(fd, 3 * C)), scalar(fd, 1.0)), scalar(fd, K)
    )
    right = fd.ops.mul(fd.ops.mul(fd.ops.mul(z, scalar(fd, 0.5)), sech2), slope)
    grad_x = fd.ops.mul(g, fd.ops.add(left, right))
    output(fd, dtype_name, grad_x, rsum(fd, grad_x, 0))


MATH = Math(_inputs, gelu_prims, gelu_func, ("x", "bias"))

FORWARD = Fusion(
    name="gelu_fwd",
    title="Bias+GELU forward",
    direction="forward",
    math=MATH,
    define=_define_forward,
    fusion_args=lambda i: [i["x"], i["bias"]],
    bytes_moved=lambda m, n, s: s * (2 * m * n + n),  # reads x and bias, writes y
)

BACKWARD = Fusion(
    name="gelu_bwd",
    title="Bias+GELU backward",
    direction="backward",
    math=MATH,
    define=_define_backward,
    fusion_args=lambda i: [i["x"], i["bias"], i["grad"]],
    # reads x, bias and grad; writes grad_x and grad_bias
    bytes_moved=lambda m, n, s: s * (3 * m * n + 2 * n),
    grad_inputs=("x", "bias"),
)
