"""What a fusion of the catalog is: the seam every fusion module fills in once.

A fusion is one piece of math measured two ways: the hand-written nvFuser definition and
``thunder.jit`` of the same math with the nvFuser executor (and the eager / torch.compile
context). The measuring engine (benchmarks/engine/measure.py) knows nothing of any
fusion's math: it asks this record for inputs, the callables, the float64 reference and the
bytes moved. torch and nvFuser are imported inside the functions each module supplies, so that
asv can discover the suite on machines without them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

#: The fusion every result, key and issue from before the catalog names; the catalog's first.
DEFAULT_FUSION = "rmsnorm_bwd"

Tensor = Any  # torch.Tensor, kept lazy
Inputs = Mapping[str, Tensor]
Direction = Literal["forward", "backward"]


class Math(NamedTuple):
    """What a module's forward and backward share: the function, measured three ways."""

    #: Fixed-seed inputs of one point: ``make_inputs(m, n, dtype_name, seed)``.
    make_inputs: Callable[[int, int, str, int], dict[str, Tensor]]
    #: The math from torch primitives (thunder-prims, eager and torch.compile run it).
    prims: Callable[..., Any]
    #: The same math through ``torch.nn.functional`` (thunder-func), where such an op exists.
    functional: Callable[..., Any] | None
    #: The inputs ``prims`` / ``functional`` take, in order.
    call_inputs: tuple[str, ...]


@dataclass(frozen=True)
class Fusion:
    """One fusion of the catalog (benchmarks/fusions/catalog.py lists them)."""

    #: Its key everywhere: results, noise model, issues, ``RMSNORM_BENCH_FUSIONS``.
    name: str
    #: How a person names it in a comment: "LayerNorm backward".
    title: str
    direction: Direction
    math: Math
    #: Writes the hand-written definition into an open ``FusionDefinition``:
    #: ``define(fd, dtype_name)``.
    define: Callable[[Any, str], None]
    #: The hand-written fusion's inputs, in order (a backward's saved tensors made here).
    fusion_args: Callable[[Inputs], list[Tensor]]
    #: Bytes one call must move at least: ``bytes_moved(m, n, itemsize)``.
    bytes_moved: Callable[[int, int, int], int]
    #: Backward: the inputs whose gradients are the outputs, in the hand-written fusion's
    #: output order. Forward: empty (the outputs are what the function returns).
    grad_inputs: tuple[str, ...] = ()
    #: Which size sets of benchmarks/size_sets.toml it runs (``[groups.<name>]``).
    size_group: str = "catalog"
    #: The float64 outputs a correct variant must match, when not the primitives' own in
    #: float64 (:meth:`expected`); ``got`` (the variant's outputs) lets a fusion with random
    #: numbers (dropout) judge against the mask that variant drew.
    reference: Callable[[Inputs, Sequence[Tensor]], tuple[Tensor, ...]] | None = None
    #: A check of a variant's outputs beyond closeness (a dropout's kept fraction): the
    #: reason it fails, or None.
    sanity: Callable[[Inputs, Sequence[Tensor]], str | None] | None = None

    @property
    def make_inputs(self) -> Callable[[int, int, str, int], dict[str, Tensor]]:
        return self.math.make_inputs

    @property
    def prims(self) -> Callable[..., Any]:
        return self.math.prims

    @property
    def functional(self) -> Callable[..., Any] | None:
        return self.math.functional

    @property
    def call_inputs(self) -> tuple[str, ...]:
        return self.math.call_inputs

    def expected(self, inputs: Inputs, got: Sequence[Tensor]) -> tuple[Tensor, ...]:
        """The outputs a variant must match: ``reference``, else the primitives in float64
        (the forward's outputs, or the backward's gradients by autograd)."""
        if self.reference is not None:
            return self.reference(inputs, got)
        if self.direction == "forward":
            return float64_forward(self, inputs)
        return float64_grads(self, inputs)


def nv_dtype(dtype_name: str) -> Any:
    """nvFuser's DataType for a torch dtype name."""
    from nvfuser_direct import DataType

    return {"bfloat16": DataType.BFloat16, "float16": DataType.Half, "float32": DataType.Float}[
        dtype_name
    ]


def matrix(fd: Any, dtype_name: str) -> Any:
    """An ``[M, N]`` contiguous input of the point's dtype, symbolic in both extents."""
    return fd.define_tensor(
        shape=[-1, -1], contiguity=[True, True], dtype=nv_dtype(dtype_name), is_cpu=False
    )


def vector(fd: Any, dtype_name: str) -> Any:
    """An ``[N]`` input (a weight or a bias) of the point's dtype."""
    return fd.define_tensor(shape=[-1], contiguity=[True], dtype=nv_dtype(dtype_name), is_cpu=False)


def row_stat(fd: Any) -> Any:
    """A saved per-row fp32 ``[M, 1]`` statistic (rms, mean, invstd)."""
    from nvfuser_direct import DataType

    return fd.define_tensor(
        shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False
    )


def upcast(fd: Any, tv: Any, dtype_name: str) -> Any:
    """bf16 / fp16 in, fp32 math: as the hand-written fusions of nvFuser do."""
    from nvfuser_direct import DataType

    return tv if dtype_name == "float32" else fd.ops.cast(tv, DataType.Float)


def downcast(fd: Any, tv: Any, dtype_name: str) -> Any:
    return tv if dtype_name == "float32" else fd.ops.cast(tv, nv_dtype(dtype_name))


def output(fd: Any, dtype_name: str, *tvs: Any) -> None:
    """Each output, cast back to the point's dtype."""
    for tv in tvs:
        fd.add_output(downcast(fd, tv, dtype_name))


def rows_b(fd: Any, tv: Any, like: Any) -> Any:
    """A per-row ``[M]`` or ``[M, 1]`` value broadcast to ``like``'s ``[M, N]``."""
    dims = [0, 1] if len(tv.shape()) == 2 else [0]
    return fd.ops.broadcast_in_dim(tv, shape=like.shape(), broadcast_dims=dims)


def cols_b(fd: Any, tv: Any, like: Any) -> Any:
    """A per-column ``[N]`` value (weight, bias) broadcast to ``like``'s ``[M, N]``."""
    return fd.ops.broadcast_in_dim(tv, shape=like.shape(), broadcast_dims=[1])


def rsum(fd: Any, tv: Any, dim: int) -> Any:
    """Sum over one dimension of an ``[M, N]`` value (0: over rows, 1: along each row)."""
    from nvfuser_direct import DataType

    return fd.ops.sum(tv, [dim], False, DataType.Null)


def rmean(fd: Any, tv: Any, dim: int) -> Any:
    return fd.ops.div(rsum(fd, tv, dim), extent(fd, tv, dim))


def scalar(fd: Any, value: float) -> Any:
    """A float constant of the definition."""
    from nvfuser_direct import DataType

    return fd.define_scalar(value, dtype=DataType.Double)


def extent(fd: Any, tv: Any, dim: int) -> Any:
    """A symbolic extent of ``tv``; the accessor's name moved between nvFuser frontends."""
    if hasattr(tv, "size"):
        return tv.size(dim)
    return fd.ops.size(tv, dim)


def randn(
    m: int, n: int, dtype_name: str, seed: int, names: Sequence[str], vectors: Sequence[str] = ()
) -> dict[str, Tensor]:
    """Named ``[M, N]`` and ``[N]`` normal tensors from one fixed-seed generator."""
    import torch

    dtype = getattr(torch, dtype_name)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    out = {k: torch.randn(m, n, device="cuda", dtype=dtype, generator=gen) for k in names}
    out.update({k: torch.randn(n, device="cuda", dtype=dtype, generator=gen) for k in vectors})
    return out


def float64_forward(fusion: Fusion, inputs: Inputs) -> tuple[Tensor, ...]:
    """A forward fusion's outputs from its primitives in float64 (the usual reference)."""
    args = [inputs[k].double() for k in fusion.call_inputs]
    out = fusion.prims(*args)
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def float64_grads(
    fusion: Fusion, inputs: Inputs, fn: Callable[..., Any] | None = None
) -> tuple[Tensor, ...]:
    """A backward fusion's gradients by float64 autograd of its primitives (or ``fn``)."""
    args = {k: inputs[k].double() for k in fusion.call_inputs}
    for k in fusion.grad_inputs:
        args[k].requires_grad_()
    (fn or fusion.prims)(*(args[k] for k in fusion.call_inputs)).backward(inputs["grad"].double())
    return tuple(args[k].grad for k in fusion.grad_inputs)
