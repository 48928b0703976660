"""Dropout, residual add and a norm (RMSNorm or LayerNorm), forward and backward: the
pre-norm block NVIDIA/Fuser#4625 found 1.4x slower through thunder.jit than hand-written.

Forward: ``x = residual + dropout(inp)``, ``y = norm(x)``; it returns both (the block hands
``x`` on as the next residual), which is also what lets a check see the mask a variant drew.
Backward: the gradients of inp, residual, weight (and bias); the hand-written fusion takes the
saved bool mask, as nvFuser's did, where Thunder may replay the random numbers instead
(Lightning-AI/lightning-thunder#2231). Random numbers differ between variants, so the
reference is computed with the mask each variant used, read back from its own outputs, and a
variant's kept fraction must be close to 1 - p.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from . import layernorm
from . import rmsnorm as rms
from .spec import (
    Fusion,
    Inputs,
    Math,
    Tensor,
    cols_b,
    float64_grads,
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

Norm = Literal["rmsnorm", "layernorm"]
P = 0.1
KEEP = 1.0 - P
#: How far a variant's kept fraction may be from 1 - p (the smallest points have 2**18
#: elements: the fraction's standard deviation is then 6e-4).
KEPT_SLACK = 0.01


def _norm(norm: Norm) -> Callable[..., Tensor]:
    return rms.rmsnorm_prims if norm == "rmsnorm" else layernorm.layernorm_prims


def _params(norm: Norm) -> tuple[str, ...]:
    return ("weight",) if norm == "rmsnorm" else ("weight", "bias")


def _prims(norm: Norm, returns_x: bool) -> Callable[..., Any]:
    def fn(inp: Tensor, residual: Tensor, *params: Tensor) -> Any:
        import torch

        keep = torch.rand_like(inp) < KEEP
        x = residual + inp * keep / KEEP
        y = _norm(norm)(x, *params)
        return (x, y) if returns_x else y

    return fn


def _functional(norm: Norm, returns_x: bool) -> Callable[..., Any]:
    def fn(inp: Tensor, residual: Tensor, *params: Tensor) -> Any:
        import torch.nn.functional as F

        x = residual + F.dropout(inp, p=P, training=True)
        y = (
            rms.rmsnorm_func(x, *params)
            if norm == "rmsnorm"
            else layernorm.layernorm_func(x, *params)
        )
        return (x, y) if returns_x else y

    return fn


def _inputs(norm: Norm) -> Callable[[int, int, str, int], dict[str, Tensor]]:
    def make(m: int, n: int, dtype_name: str, seed: int) -> dict[str, Tensor]:
        import torch

        out = randn(m, n, dtype_name, seed, ("inp", "residual", "grad"), _params(norm))
        gen = torch.Generator(device="cuda").manual_seed(seed + 1)
        out["mask"] = torch.rand(m, n, device="cuda", generator=gen) < KEEP
        return out

    return make


def _saved_x(i: Inputs) -> Tensor:
    """The forward's residual sum with the inputs' own mask, as the backward's saved x."""
    x = i["residual"].float() + i["inp"].float() * i["mask"] / KEEP
    return x.to(i["inp"].dtype)


def _define_dropout_add(fd: Any, dtype_name: str) -> tuple[Any, Any]:
    """``residual + dropout(inp)`` in fp32 with nvFuser's own random numbers: (x, inputs)."""
    from nvfuser_direct import DataType

    inp = upcast(fd, matrix(fd, dtype_name), dtype_name)
    residual = upcast(fd, matrix(fd, dtype_name), dtype_name)
    rand = fd.ops.uniform(scalar(fd, 0.0), scalar(fd, 1.0), shape=inp.shape(), dtype=DataType.Float)
    kept = fd.ops.cast(fd.ops.lt(rand, scalar(fd, KEEP)), DataType.Float)
    dropped = fd.ops.mul(fd.ops.mul(inp, kept), scalar(fd, 1.0 / KEEP))
    return fd.ops.add(residual, dropped), inp


def _define_forward(norm: Norm) -> Callable[[Any, str], None]:
    def define(fd: Any, dtype_name: str) -> None:
        x, _ = _define_dropout_add(fd, dtype_name)
        w = upcast(fd, vector(fd, dtype_name), dtype_name)
        if norm == "rmsnorm":
            inv_rms = fd.ops.rsqrt(fd.ops.add(rmean(fd, fd.ops.mul(x, x), 1), scalar(fd, rms.EPS)))
            y = fd.ops.mul(fd.ops.mul(x, rows_b(fd, inv_rms, x)), cols_b(fd, w, x))
        else:
            b = upcast(fd, vector(fd, dtype_name), dtype_name)
            y = layernorm.define_normalise(fd, x, w, b)
        output(fd, dtype_name, x, y)

    return define


def _rms_grads(fd: Any, x: Any, rms_: Any, g: Any, w: Any) -> tuple[Any, Any]:
    """grad_x = g*w/rms - x * sum_N(g*w*x) / (N * rms^3), grad_w = sum_M(g * x / rms)."""
    inv_rms = fd.ops.reciprocal(rows_b(fd, rms_, x))
    gw = fd.ops.mul(g, cols_b(fd, w, x))
    dot = rows_b(fd, rmean(fd, fd.ops.mul(gw, x), 1), x)
    inv3 = fd.ops.mul(fd.ops.mul(inv_rms, inv_rms), inv_rms)
    grad_x = fd.ops.sub(fd.ops.mul(gw, inv_rms), fd.ops.mul(x, fd.ops.mul(dot, inv3)))
    return grad_x, rsum(fd, fd.ops.mul(g, fd.ops.mul(x, inv_rms)), 0)


def _define_backward(norm: Norm) -> Callable[[Any, str], None]:
    def define(fd: Any, dtype_name: str) -> None:
        from nvfuser_direct import DataType

        x = upcast(fd, matrix(fd, dtype_name), dtype_name)
        mask = fd.define_tensor(
            shape=[-1, -1], contiguity=[True, True], dtype=DataType.Bool, is_cpu=False
        )
        stats = [row_stat(fd)] if norm == "rmsnorm" else [row_stat(fd), row_stat(fd)]
        g = upcast(fd, matrix(fd, dtype_name), dtype_name)
        w = upcast(fd, vector(fd, dtype_name), dtype_name)
        if norm == "rmsnorm":
            grad_x, *params = _rms_grads(fd, x, stats[0], g, w)
        else:
            grad_x, *params = layernorm.define_grads(fd, x, stats[0], stats[1], g, w)
        kept = fd.ops.cast(mask, DataType.Float)
        grad_inp = fd.ops.mul(fd.ops.mul(grad_x, kept), scalar(fd, 1.0 / KEEP))
        output(fd, dtype_name, grad_inp, grad_x, *params)

    return define


def _backward_args(norm: Norm) -> Callable[[Inputs], list[Tensor]]:
    def args(i: Inputs) -> list[Tensor]:
        x = _saved_x(i)
        stats = [rms.saved_rms(x)] if norm == "rmsnorm" else list(layernorm.saved_stats(x))
        return [x, i["mask"], *stats, i["grad"], i["weight"]]  # the bias is not needed

    return args


def _kept_fraction(mask: Tensor) -> str | None:
    kept = float(mask.float().mean())
    if abs(kept - KEEP) > KEPT_SLACK:
        return f"kept fraction {kept:.4f}, expected {KEEP} +- {KEPT_SLACK} (dropout p={P})"
    return None


def _forward_mask(i: Inputs, got: Sequence[Tensor]) -> Tensor:
    """Where the variant kept ``inp``: its ``x`` differs from the residual there (a kept value
    that rounds away is within the tolerance anyway)."""
    return got[0].double() != i["residual"].double()


def _forward_reference(norm: Norm) -> Callable[[Inputs, Sequence[Tensor]], tuple[Tensor, ...]]:
    def ref(i: Inputs, got: Sequence[Tensor]) -> tuple[Tensor, ...]:
        mask = _forward_mask(i, got)
        x = i["residual"].double() + i["inp"].double() * mask / KEEP
        return x, _norm(norm)(x, *(i[p].double() for p in _params(norm)))

    return ref


def _backward_reference(
    norm: Norm, fusion: Callable[[], Fusion]
) -> Callable[[Inputs, Sequence[Tensor]], tuple[Tensor, ...]]:
    def ref(i: Inputs, got: Sequence[Tensor]) -> tuple[Tensor, ...]:
        mask = got[0] != 0  # grad_inp is zero exactly where the variant dropped

        def with_mask(inp: Tensor, residual: Tensor, *params: Tensor) -> Tensor:
            return _norm(norm)(residual + inp * mask / KEEP, *params)

        return float64_grads(fusion(), i, with_mask)

    return ref


def make(norm: Norm, title: str) -> tuple[Fusion, Fusion]:
    """The forward and backward fusions of dropout + add + ``norm``."""
    name = f"dropout_{norm}"
    params = _params(norm)
    calls = ("inp", "residual", *params)
    fwd = Fusion(
        name=f"{name}_fwd",
        title=f"Dropout+{title} forward",
        direction="forward",
        math=Math(_inputs(norm), _prims(norm, True), _functional(norm, True), calls),
        define=_define_forward(norm),
        fusion_args=lambda i: [i["inp"], i["residual"], *(i[p] for p in params)],
        # reads inp, residual and the params; writes x and y (the mask is drawn in the kernel)
        bytes_moved=lambda m, n, s: s * (4 * m * n + len(params) * n),
        reference=_forward_reference(norm),
        sanity=lambda i, got: _kept_fraction(_forward_mask(i, got)),
    )
    bwd: Fusion = Fusion(
        name=f"{name}_bwd",
        title=f"Dropout+{title} backward",
        direction="backward",
        math=Math(_inputs(norm), _prims(norm, False), _functional(norm, False), calls),
        define=_define_backward(norm),
        fusion_args=_backward_args(norm),
        # reads x, grad, the 1-byte mask, the weight and the fp32 row stats (one a param);
        # writes the gradients of inp, residual and the params
        bytes_moved=lambda m, n, s: (
            s * (4 * m * n + (1 + len(params)) * n) + m * n + 4 * m * len(params)
        ),
        grad_inputs=calls,
        reference=_backward_reference(norm, lambda: bwd),
        sanity=lambda i, got: _kept_fraction(got[0] != 0),
    )
    return fwd, bwd


RMSNORM_FORWARD, RMSNORM_BACKWARD = make("rmsnorm", "RMSNorm")
LAYERNORM_FORWARD, LAYERNORM_BACKWARD = make("layernorm", "LayerNorm")
