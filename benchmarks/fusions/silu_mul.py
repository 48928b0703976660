"""SiLU(x) * z, forward and backward: the gated MLP of LLaMA-style models."""

from __future__ import annotations

from typing import Any

from .spec import (
    Fusion,
    Math,
    Tensor,
    matrix,
    output,
    randn,
    scalar,
    upcast,
)


def silu_mul_prims(x: Tensor, z: Tensor) -> Tensor:
    """x * sigmoid(x) * z from primitives (sigmoid as 1 / (1 + exp(-x)))."""
    return x / (1.0 + (-x).exp()) * z


def silu_mul_func(x: Tensor, z: Tensor) -> Tensor:
    import torch.nn.functional as F

    return F.silu(x) * z


def _inputs(m: int, n: int, dtype_name: str, seed: int) -> dict[str, Tensor]:
    return randn(m, n, dtype_name, seed, ("x", "z", "grad"))


def _define_forward(fd: Any, dtype_name: str) -> None:
    x = upcast(fd, matrix(fd, dtype_name), dtype_name)
    z = upcast(fd, matrix(fd, dtype_name), dtype_name)
    output(fd, dtype_name, fd.ops.mul(fd.ops.mul(x, fd.ops.sigmoid(x)), z))


def _define_backward(fd: Any, dtype_name: str) -> None:
    """grad_x = g z s (1 + x (1 - s)), grad_z = g x s, s = sigmoid(x)."""
    x = upcast(fd, matrix(fd, dtype_name), dtype_name)
    z = upcast(fd, matrix(fd, dtype_name), dtype_name)
    g = upcast(fd, matrix(fd, dtype_name), dtype_name)
    s = fd.ops.sigmoid(x)
    silu = fd.ops.mul(x, s)
    one_plus = fd.ops.add(fd.ops.mul(x, fd.ops.sub(scalar(fd, 1.0), s)), scalar(fd, 1.0))
    grad_x = fd.ops.mul(fd.ops.mul(fd.ops.mul(g, z), s), one_plus)
    output(fd, dtype_name, grad_x, fd.ops.mul(g, silu))


MATH = Math(_inputs, silu_mul_prims, silu_mul_func, ("x", "z"))

FORWARD = Fusion(
    name="silu_mul_fwd",
    title="SiLU·mul forward",
    direction="forward",
    math=MATH,
    define=_define_forward,
    fusion_args=lambda i: [i["x"], i["z"]],
    bytes_moved=lambda m, n, s: s * 3 * m * n,  # reads x and z, writes y
)

BACKWARD = Fusion(
    name="silu_mul_bwd",
    title="SiLU·mul backward",
    direction="backward",
    math=MATH,
    define=_define_backward,
    fusion_args=lambda i: [i["x"], i["z"], i["grad"]],
    bytes_moved=lambda m, n, s: s * 5 * m * n,  # reads x, z, grad; writes grad_x, grad_z
    grad_inputs=("x", "z"),
)
