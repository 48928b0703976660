"""Build each contender of one fusion as a ready-to-time call.

Expensive state (JIT compiles, forward graphs) is built once per point. A backward fusion times
only the backward call, as nvFuser's harness does (``outputs.backward(grads)`` for the autograd
variants, ``fd.execute`` for the hand-written fusion); a forward fusion times the function
itself, on inputs that need no gradient. What a fusion computes comes from its module
(benchmarks/fusions/); nothing here knows any fusion's math.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..fusions.catalog import DEFAULT, FUSIONS
from ..fusions.spec import Fusion
from .digest import canonical_sha256

Tensor = Any  # torch.Tensor, kept lazy so the suite imports without torch


@dataclass(frozen=True)
class Fingerprint:
    """The sha256 (hex) of a fusion definition's printed Python text, and of its canonical
    form (digest.py: the same on identical code, whatever the printer numbered); both None
    where printing it failed (``error`` says why): a diagnostic never costs a measurement."""

    sha256: str | None
    canonical: str | None = None
    error: str | None = None
    #: The printed text itself (what a capture writes as ``definition.py.txt``).
    text: str | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class NvfuserBuild:
    """What a capture reads from the built hand-written fusion (capture.py): the definition,
    its arguments."""

    fd: Any
    args: list[Any]


@dataclass(frozen=True)
class ThunderBuild:
    """What a capture reads from a built Thunder variant (capture.py): the ``thunder.jit``
    function (its traces), whether the timed call is a backward, and one timed call with its
    gradients cleared first (never a slowdown's wrapper: what ran inside the fusion)."""

    jitted: Any
    backward: bool
    call: Callable[[], None]


@dataclass
class Variant:
    """One contender at one point: the call to time and how to reset around it."""

    name: str
    call: Callable[[], None]
    clear: Callable[[], None]
    outputs: Callable[[], tuple[Tensor, ...]]
    compile_s: float
    #: The hand-written definition's fingerprint (the ``nvfuser`` variant only; None elsewhere).
    fingerprint: Fingerprint | None = None
    #: What the measuring process captures from it after its timed rounds (issue 39: no second
    #: process rebuilds it); None for the context variants, which are not captured.
    built: NvfuserBuild | ThunderBuild | None = None


def definition_fingerprint(fd: Any) -> Fingerprint:
    """sha256 of ``repr(fd)``, and of its canonical form: nvfuser_direct's
    ``FusionDefinition.__repr__`` returns ``translate_fusion(self.fusion)``, the definition as
    Python text (it defines no ``__str__``, so ``str(fd)`` is the same text). Never raises."""
    try:
        text = repr(fd)
        if not isinstance(text, str):  # a broken __repr__ can return anything
            raise TypeError(f"repr returned {type(text).__name__}, not str")
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return Fingerprint(digest, canonical_sha256(text), text=text)
    except Exception as exc:
        return Fingerprint(None, None, f"{exc.__class__.__name__}: {exc}")


def build(
    name: str,
    inputs: dict[str, Tensor],
    dtype_name: str,
    thunder_variant: str,
    fusion: Fusion | None = None,
) -> Variant:
    """The variant called ``name`` of ``fusion`` (RMSNorm backward by default); raises whatever
    its stack raises, the caller records it."""
    f = fusion or FUSIONS[DEFAULT]
    if name == "nvfuser":
        return _nvfuser(f, inputs, dtype_name)
    if name == "thunder-prims":
        return _thunder_variant(name, f, f.prims, thunder_variant, inputs)
    if name == "thunder-func":
        if f.functional is None:
            raise NotImplementedError(f"{f.title} has no torch.nn.functional form")
        return _thunder_variant(name, f, f.functional, thunder_variant, inputs)
    if name == "eager":
        return _timed(name, f, f.prims, inputs)
    if name == "torch-compile":
        import torch

        torch._dynamo.reset()  # a fresh cache per point: no silent fallback at the recompile limit
        return _timed(name, f, torch.compile(f.prims, dynamic=False), inputs)
    raise ValueError(f"unknown variant {name!r}")


def _nvfuser(f: Fusion, inputs: dict[str, Tensor], dtype_name: str) -> Variant:
    import torch
    from nvfuser_direct import FusionDefinition

    args = f.fusion_args(inputs)
    holder: dict[str, Any] = {}

    start = time.perf_counter()
    with FusionDefinition() as fd:
        f.define(fd, dtype_name)
    defined_s = time.perf_counter() - start
    # Printed as defined, before the first execute hands the fusion to its executor cache;
    # kept out of compile_s.
    fingerprint = definition_fingerprint(fd)

    def call() -> None:
        holder["out"] = fd.execute(args)

    start = time.perf_counter()
    call()
    torch.cuda.synchronize()
    compile_s = defined_s + time.perf_counter() - start

    def outputs() -> tuple[Tensor, ...]:
        return tuple(holder["out"])

    def clear() -> None:
        holder.pop("out", None)

    return Variant(
        "nvfuser", call, clear, outputs, compile_s, fingerprint, NvfuserBuild(fd, list(args))
    )


def _thunder_variant(
    name: str, f: Fusion, fn: Callable[..., Any], thunder_variant: str, inputs: dict[str, Tensor]
) -> Variant:
    jitted, call = _thunder(fn, thunder_variant)
    variant = _timed(name, f, call, inputs)
    timed, clear = variant.call, variant.clear

    def one_call() -> None:
        clear()
        timed()

    variant.built = ThunderBuild(jitted, f.direction == "backward", one_call)
    return variant


def _timed(name: str, f: Fusion, fn: Callable[..., Any], inputs: dict[str, Tensor]) -> Variant:
    return (
        _autograd(name, f, fn, inputs)
        if f.direction == "backward"
        else _forward(name, f, fn, inputs)
    )


def _forward(name: str, f: Fusion, fn: Callable[..., Any], inputs: dict[str, Tensor]) -> Variant:
    """Time the function itself, on inputs that need no gradient (no graph is recorded)."""
    import torch

    args = [inputs[k] for k in f.call_inputs]
    holder: dict[str, Any] = {}

    def call() -> None:
        holder["out"] = fn(*args)

    start = time.perf_counter()
    call()
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - start

    def outputs() -> tuple[Tensor, ...]:
        out = holder["out"]
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    def clear() -> None:
        holder.pop("out", None)

    return Variant(name, call, clear, outputs, compile_s)


def _autograd(name: str, f: Fusion, fn: Callable[..., Any], inputs: dict[str, Tensor]) -> Variant:
    """Forward once, then time only ``y.backward(grad)`` with the graph retained."""
    import torch

    leaves = {
        k: inputs[k].detach().clone().requires_grad_() if k in f.grad_inputs else inputs[k]
        for k in f.call_inputs
    }
    grad = inputs["grad"]

    start = time.perf_counter()
    y = fn(*(leaves[k] for k in f.call_inputs))
    y.backward(grad, retain_graph=True)
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - start

    def call() -> None:
        y.backward(grad, retain_graph=True)

    def clear() -> None:
        # Accumulating into .grad would add elementwise kernels to the timed call.
        for k in f.grad_inputs:
            leaves[k].grad = None

    def outputs() -> tuple[Tensor, ...]:
        grads = tuple(leaves[k].grad for k in f.grad_inputs)
        assert all(g is not None for g in grads)
        return grads

    clear()
    return Variant(name, call, clear, outputs, compile_s)


def _thunder(
    fn: Callable[..., Any], thunder_variant: str
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``thunder.jit`` with the nvFuser executor, as nvFuser's harness builds its baseline: the
    jitted function (its traces) and what to call.

    ``thunder_variant`` selects a deliberately slower Thunder for producing a real regressed
    data set: ``unfused-backward`` gives the nvFuser executor fuel for one fusion region only,
    which the forward takes, so the backward runs unfused (a real failure mode of an executor
    that stops claiming the backward). It touches Thunder only, never the hand-written fusion.
    """
    import thunder
    from thunder.executors.nvfuserex import nvfuserex

    # nvFuser's harness also passed nv_enable_bookend=False; Thunder 0.2.6 has no such option.
    jitted = thunder.jit(fn, executors=[nvfuserex])
    if thunder_variant == "stock":
        return jitted, jitted
    if thunder_variant == "unfused-backward":
        return jitted, _first_call_with_fuel(jitted, 1)
    raise ValueError(f"unknown thunder variant {thunder_variant!r}")


def _first_call_with_fuel(jitted: Callable[..., Tensor], fuel: int) -> Callable[..., Tensor]:
    """Compile (first call) under limited nvFuser optimisation fuel, then restore it."""
    from thunder.executors.nvfuserex import nvfuserex
    from thunder.extend import FUEL_LEVEL

    def call(*args: Tensor) -> Tensor:
        nvfuserex.set_fuel(fuel)
        try:
            return jitted(*args)
        finally:
            nvfuserex.set_fuel(FUEL_LEVEL.UNLIMITED)

    return call
