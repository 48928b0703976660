"""LayerNorm over the hidden size, forward and backward, with weight and bias.

The backward's hand-written fusion takes what a forward saves (fp32 mean and 1/std per row) and
returns the gradients of x, weight and bias; Thunder's backward gets the same from its forward.
"""

from __future__ import annotations

from typing import Any

from .spec import (
    Fusion,
    Inputs,
    Math,
    Tensor,
    cols_b,
    matrix,
    output,
    randn,
    rmean,
    row_stat,
    rows_b,
    rsum,
    scalar,
    upcast,
    vector,
)

EPS = 1e-5


def layernorm_prims(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    """(x - mean) / sqrt(var + eps) * w + b from primitives (biased variance)."""
    import torch

    mean = x.mean(1, keepdim=True)
    centred = x - mean
    var = (centred * centred).mean(1, keepdim=True)
    return centred / torch.sqrt(var + EPS) * w + b


def layernorm_func(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    import torch.nn.functional as F

    return F.layer_norm(x, (x.shape[-1],), w, b, eps=EPS)


def inputs(m: int, n: int, dtype_name: str, seed: int) -> dict[str, Tensor]:
    return randn(m, n, dtype_name, seed, ("x", "grad"), ("weight", "bias"))


def saved_stats(x: Tensor) -> tuple[Tensor, Tensor]:
    """The fp32 ``[M, 1]`` mean and 1/std a forward saves."""
    import torch

    xf = x.float()
    var, mean = torch.var_mean(xf, 1, unbiased=False, keepdim=True)
    return mean, torch.rsqrt(var + EPS)


def define_normalise(fd: Any, x: Any, w: Any, b: Any) -> Any:
    """The forward's math on fp32 values (shared with dropout+LayerNorm)."""
    mean = rmean(fd, x, 1)
    centred = fd.ops.sub(x, rows_b(fd, mean, x))
    var = rmean(fd, fd.ops.mul(centred, centred), 1)
    invstd = fd.ops.rsqrt(fd.ops.add(var, scalar(fd, EPS)))
    normed = fd.ops.mul(centred, rows_b(fd, invstd, x))
    return fd.ops.add(fd.ops.mul(normed, cols_b(fd, w, x)), cols_b(fd, b, x))


def _define_forward(fd: Any, dtype_name: str) -> None:
    x = upcast(fd, matrix(fd, dtype_name), dtype_name)
    w = upcast(fd, vector(fd, dtype_name), dtype_name)
    b = upcast(fd, vector(fd, dtype_name), dtype_name)
    output(fd, dtype_name, define_normalise(fd, x, w, b))


def define_grads(fd: Any, x: Any, mean: Any, invstd: Any, g: Any, w: Any) -> tuple[Any, Any, Any]:
    """grad_x = invstd * (g*w - mean_N(g*w) - xhat * mean_N(g*w*xhat)), grad_w = sum_M(g*xhat),
    grad_b = sum_M(g), on fp32 values (shared with dropout+LayerNorm)."""
    xhat = fd.ops.mul(fd.ops.sub(x, rows_b(fd, mean, x)), rows_b(fd, invstd, x))
    gw = fd.ops.mul(g, cols_b(fd, w, x))
    mean_gw = rows_b(fd, rmean(fd, gw, 1), x)
    mean_gw_xhat = rows_b(fd, rmean(fd, fd.ops.mul(gw, xhat), 1), x)
    inner = fd.ops.sub(fd.ops.sub(gw, mean_gw), fd.ops.mul(xhat, mean_gw_xhat))
    grad_x = fd.ops.mul(rows_b(fd, invstd, x), inner)
    return grad_x, rsum(fd, fd.ops.mul(g, xhat), 0), rsum(fd, g, 0)


def _define_backward(fd: Any, dtype_name: str) -> None:
    x = upcast(fd, matrix(fd, dtype_name), dtype_name)
    mean, invstd = row_stat(fd), row_stat(fd)
    g = upcast(fd, matrix(fd, dtype_name), dtype_name)
    w = upcast(fd, vector(fd, dtype_name), dtype_name)
    output(fd, dtype_name, *define_grads(fd, x, mean, invstd, g, w))


def _backward_args(i: Inputs) -> list[Tensor]:
    mean, invstd = saved_stats(i["x"])
    return [i["x"], mean, invstd, i["grad"], i["weight"]]


MATH = Math(inputs, layernorm_prims, layernorm_func, ("x", "weight", "bias"))

FORWARD = Fusion(
    name="layernorm_fwd",
    title="LayerNorm forward",
    direction="forward",
    math=MATH,
    define=_define_forward,
    fusion_args=lambda i: [i["x"], i["weight"], i["bias"]],
    # reads x, weight, bias; writes y
    bytes_moved=lambda m, n, s: s * (2 * m * n + 2 * n),
)

BACKWARD = Fusion(
    name="layernorm_bwd",
    title="LayerNorm backward",
    direction="backward",
    math=MATH,
    define=_define_backward,
    fusion_args=_backward_args,
    # reads x, grad, weight and the fp32 mean and 1/std; writes grad_x, grad_w, grad_b
    bytes_moved=lambda m, n, s: s * (3 * m * n + 3 * n) + 8 * m,
    grad_inputs=("x", "weight", "bias"),
)
