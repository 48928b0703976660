"""Build each contender as a ready-to-time backward call.

Expensive state (JIT compiles, forward graphs) is built once per point; what the suite times is
only the backward call, as nvFuser's harness does (``outputs.backward(grads)`` for the autograd
variants, ``fd.execute`` for the hand-written fusion).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import model

Tensor = Any  # torch.Tensor, kept lazy so the suite imports without torch


@dataclass(frozen=True)
class Fingerprint:
    """The sha256 (hex) of a fusion definition's printed Python text; ``sha256`` is None
    where printing it failed (``error`` says why): a diagnostic never costs a measurement."""

    sha256: str | None
    error: str | None = None


@dataclass
class Variant:
    """One contender at one point: the call to time and how to reset around it."""

    name: str
    call: Callable[[], None]
    clear: Callable[[], None]
    outputs: Callable[[], tuple[Tensor, Tensor]]
    compile_s: float
    #: The hand-written definition's fingerprint (the ``nvfuser`` variant only; None elsewhere).
    fingerprint: Fingerprint | None = None


def definition_fingerprint(fd: Any) -> Fingerprint:
    """sha256 of ``repr(fd)``: nvfuser_direct's ``FusionDefinition.__repr__`` returns
    ``translate_fusion(self.fusion)``, the definition as Python text (it defines no
    ``__str__``, so ``str(fd)`` is the same text). Never raises."""
    try:
        text = repr(fd)
        if not isinstance(text, str):  # a broken __repr__ can return anything
            raise TypeError(f"repr returned {type(text).__name__}, not str")
        return Fingerprint(hashlib.sha256(text.encode("utf-8")).hexdigest())
    except Exception as exc:
        return Fingerprint(None, f"{exc.__class__.__name__}: {exc}")


def build(name: str, inputs: dict[str, Tensor], dtype_name: str, thunder_variant: str) -> Variant:
    """The variant called ``name``; raises whatever its stack raises, the caller records it."""
    if name == "nvfuser":
        return _nvfuser(inputs, dtype_name)
    if name == "thunder-prims":
        return _autograd(name, _thunder(model.rmsnorm_prims, thunder_variant), inputs)
    if name == "thunder-func":
        return _autograd(name, _thunder(model.rmsnorm_func, thunder_variant), inputs)
    if name == "eager":
        return _autograd(name, model.rmsnorm_prims, inputs)
    if name == "torch-compile":
        import torch

        torch._dynamo.reset()  # a fresh cache per point: no silent fallback at the recompile limit
        return _autograd(name, torch.compile(model.rmsnorm_prims, dynamic=False), inputs)
    raise ValueError(f"unknown variant {name!r}")


def _nvfuser(inputs: dict[str, Tensor], dtype_name: str) -> Variant:
    import torch
    from nvfuser_direct import FusionDefinition

    x, grad, weight = inputs["x"], inputs["grad"], inputs["weight"]
    args = [x, model.saved_rms(x), grad, weight]
    holder: dict[str, Any] = {}

    start = time.perf_counter()
    with FusionDefinition() as fd:
        model.define_backward_fusion(fd, dtype_name)
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

    def outputs() -> tuple[Tensor, Tensor]:
        grad_input, grad_weight = holder["out"]
        return grad_input, grad_weight

    def clear() -> None:
        holder.pop("out", None)

    return Variant("nvfuser", call, clear, outputs, compile_s, fingerprint)


def _autograd(
    name: str, fn: Callable[[Tensor, Tensor], Tensor], inputs: dict[str, Tensor]
) -> Variant:
    """Forward once, then time only ``y.backward(grad)`` with the graph retained."""
    import torch

    x = inputs["x"].detach().clone().requires_grad_()
    w = inputs["weight"].detach().clone().requires_grad_()
    grad = inputs["grad"]

    start = time.perf_counter()
    y = fn(x, w)
    y.backward(grad, retain_graph=True)
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - start

    def call() -> None:
        y.backward(grad, retain_graph=True)

    def clear() -> None:
        # Accumulating into .grad would add elementwise kernels to the timed call.
        x.grad = None
        w.grad = None

    def outputs() -> tuple[Tensor, Tensor]:
        assert x.grad is not None and w.grad is not None
        return x.grad, w.grad

    clear()
    return Variant(name, call, clear, outputs, compile_s)


def _thunder(fn: Callable[[Tensor, Tensor], Tensor], thunder_variant: str) -> Callable[..., Tensor]:
    """``thunder.jit`` with the nvFuser executor, as nvFuser's harness builds its baseline.

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
        return jitted  # type: ignore[no-any-return]
    if thunder_variant == "unfused-backward":
        return _first_call_with_fuel(jitted, 1)
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
