"""RMSNorm, forward and backward: the math written once, in three forms (from primitives exactly
as in the originating report, NVIDIA/Fuser#3629; through ``F.rms_norm``; a hand-written nvFuser
backward with the semantics of nvFuser's own benchmark), and the two fusions. The backward is
the suite's first fusion and keeps every key, file and figure it had. torch and nvFuser are
imported inside the functions: asv must discover the suite on machines without them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .spec import (
    Fusion,
    Math,
    cols_b,
    matrix,
    output,
    rmean,
    rows_b,
    scalar,
    upcast,
    vector,
)

if TYPE_CHECKING:
    import torch

EPS = 1e-5


def rmsnorm_prims(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """RMSNorm from primitives, as the report wrote it (rms kept, not 1/rms)."""
    import torch

    squared_mean = (x**2).mean(1, keepdim=True)
    rms = torch.sqrt(squared_mean + EPS)
    return w * (x / rms)


def rmsnorm_func(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """RMSNorm through the functional API that Thunder decomposes itself."""
    import torch.nn.functional as F

    return F.rms_norm(x, (x.shape[-1],), w, eps=EPS)


def saved_rms(x: torch.Tensor) -> torch.Tensor:
    """The fp32 ``[M, 1]`` rms that a forward saves for the hand-written backward."""
    import torch

    return torch.sqrt((x.float() ** 2).mean(1, keepdim=True) + EPS)


def make_inputs(m: int, n: int, dtype_name: str, seed: int = 0) -> dict[str, torch.Tensor]:
    """x, grad and weight drawn from a fixed seed, so every run times the same data; the draw
    order (x, grad, weight) is the one the recorded data were made with."""
    import torch

    dtype = getattr(torch, dtype_name)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(m, n, device="cuda", dtype=dtype, generator=gen)
    grad = torch.randn(m, n, device="cuda", dtype=dtype, generator=gen)
    weight = torch.randn(n, device="cuda", dtype=dtype, generator=gen)
    return {"x": x, "grad": grad, "weight": weight}


def _extent(fd: Any, tv: Any, dim: int) -> Any:
    """A symbolic extent of ``tv``; the accessor's name moved between nvFuser frontends."""
    if hasattr(tv, "size"):
        return tv.size(dim)
    return fd.ops.size(tv, dim)


def define_backward_fusion(fd: Any, dtype_name: str) -> None:
    """The hand-written nvFuser RMSNorm backward, in ``nvfuser_direct``.

    Inputs, as in nvFuser's benchmark: x ``[M, N]``, the saved rms ``[M, 1]`` in fp32 (rms itself,
    not its reciprocal), grad ``[M, N]``, weight ``[N]``; shapes symbolic; bf16/fp16 upcast to fp32.
    Outputs: grad_input = g*w/rms - x * sum_N(g*w*x) / (N * rms^3) and
    grad_weight = sum_M(g * x / rms), cast back to the input dtype.
    """
    from nvfuser_direct import DataType

    nv_dtype = {"bfloat16": DataType.BFloat16, "float16": DataType.Half, "float32": DataType.Float}[
        dtype_name
    ]
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=nv_dtype, is_cpu=False)
    rms = fd.define_tensor(
        shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False
    )
    grad = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=nv_dtype, is_cpu=False)
    weight = fd.define_tensor(shape=[-1], contiguity=[True], dtype=nv_dtype, is_cpu=False)
    if nv_dtype != DataType.Float:
        x = fd.ops.cast(x, DataType.Float)
        grad = fd.ops.cast(grad, DataType.Float)
        weight = fd.ops.cast(weight, DataType.Float)

    inv_rms = fd.ops.reciprocal(
        fd.ops.broadcast_in_dim(rms, shape=x.shape(), broadcast_dims=[0, 1])
    )
    w_b = fd.ops.broadcast_in_dim(weight, shape=x.shape(), broadcast_dims=[1])
    gw = fd.ops.mul(grad, w_b)

    grad_weight = fd.ops.sum(fd.ops.mul(grad, fd.ops.mul(x, inv_rms)), [0], False, DataType.Null)

    row_dot = fd.ops.sum(fd.ops.mul(gw, x), [1], False, DataType.Null)
    row_dot_b = fd.ops.broadcast_in_dim(row_dot, shape=x.shape(), broadcast_dims=[0])
    inv_rms3 = fd.ops.mul(fd.ops.mul(inv_rms, inv_rms), inv_rms)
    coef = fd.ops.div(fd.ops.mul(row_dot_b, inv_rms3), _extent(fd, x, 1))
    grad_input = fd.ops.sub(fd.ops.mul(gw, inv_rms), fd.ops.mul(x, coef))

    if nv_dtype != DataType.Float:
        grad_input = fd.ops.cast(grad_input, nv_dtype)
        grad_weight = fd.ops.cast(grad_weight, nv_dtype)
    fd.add_output(grad_input)
    fd.add_output(grad_weight)


def _define_forward(fd: Any, dtype_name: str) -> None:
    """y = w * x / sqrt(mean_N(x^2) + eps), fp32 inside."""
    x = upcast(fd, matrix(fd, dtype_name), dtype_name)
    w = upcast(fd, vector(fd, dtype_name), dtype_name)
    mean_sq = rmean(fd, fd.ops.mul(x, x), 1)
    inv_rms = fd.ops.rsqrt(fd.ops.add(mean_sq, scalar(fd, EPS)))
    y = fd.ops.mul(fd.ops.mul(x, rows_b(fd, inv_rms, x)), cols_b(fd, w, x))
    output(fd, dtype_name, y)


MATH = Math(make_inputs, rmsnorm_prims, rmsnorm_func, ("x", "weight"))

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


def backward_bytes(m: int, n: int, itemsize: int) -> int:
    """Bytes one backward call must move at minimum, counted as nvFuser's harness counts them:
    reads x, grad and weight and writes grad_input and grad_weight (all in the input dtype),
    and reads the fp32 rms of each row: itemsize * (3*M*N + 2*N) + 4*M."""
    return itemsize * (3 * m * n + 2 * n) + 4 * m


BACKWARD = Fusion(
    name="rmsnorm_bwd",
    title="RMSNorm backward",
    direction="backward",
    math=MATH,
    define=define_backward_fusion,
    fusion_args=lambda i: [i["x"], saved_rms(i["x"]), i["grad"], i["weight"]],
    bytes_moved=backward_bytes,
    grad_inputs=("x", "weight"),
    size_group="rmsnorm_bwd",  # its sets are benchmarks/size_sets.toml's top-level ones
)
