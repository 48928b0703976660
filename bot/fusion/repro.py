"""A reproducer for the regressed point: a script a maintainer runs on one GPU, no suite needed.

For nvFuser's hand-written fusion it is nvFuser's own repro script, as captured at head
(``fd.last_repro_script()``: the definition and its inputs). For Thunder it is a short script
that builds the same inputs, jits the same function with the nvFuser executor, runs the
backward, prints the backward trace and its nvFuser fusions, and times the backward call with
CUDA events around 20 calls, L2 flushed: enough to see the regression and to bisect with.
"""

from __future__ import annotations

from bot.fusion.types import PointCapture
from bot.results.types import REFERENCE

_FUNCTIONS = {
    "thunder-prims": (
        "def rmsnorm(x, w):\n"
        "    rms = torch.sqrt((x**2).mean(1, keepdim=True) + EPS)\n"
        "    return w * (x / rms)\n"
    ),
    "thunder-func": (
        "def rmsnorm(x, w):\n"
        "    return torch.nn.functional.rms_norm(x, (x.shape[-1],), w, eps=EPS)\n"
    ),
}
_DTYPES = {"bfloat16", "float16", "float32"}


def thunder_script(variant: str, dtype: str, shape: str, thunder_variant: str = "stock") -> str:
    """``thunder_variant`` "unfused-backward" reproduces the suite's deliberately slower state
    (the nvFuser executor given fuel for one region, which the forward takes)."""
    if variant not in _FUNCTIONS or dtype not in _DTYPES:
        raise ValueError(f"no Thunder reproducer for {variant} {dtype}")
    m, _, n = shape.partition("x")
    if not (m.isdigit() and n.isdigit()):
        raise ValueError(f"shape {shape!r} is not MxN")
    fuel = thunder_variant == "unfused-backward"
    lines = [
        f"# RMSNorm backward, {variant} {dtype} {shape}: Thunder's nvFuser executor against the",
        "# hand-written fusion's inputs. Run on one CUDA GPU with torch, nvFuser and Thunder.",
        "import torch",
        "import thunder",
        "from thunder.examine import get_fusions",
        "from thunder.executors.nvfuserex import nvfuserex",
        *(["from thunder.extend import FUEL_LEVEL"] if fuel else []),
        "",
        "EPS = 1e-5",
        "",
        _FUNCTIONS[variant],
        "",
        "gen = torch.Generator(device='cuda').manual_seed(0)",
        f"x = torch.randn({m}, {n}, device='cuda', dtype=torch.{dtype}, generator=gen)",
        f"g = torch.randn({m}, {n}, device='cuda', dtype=torch.{dtype}, generator=gen)",
        f"w = torch.randn({n}, device='cuda', dtype=torch.{dtype}, generator=gen)",
        "x.requires_grad_()",
        "w.requires_grad_()",
        "jitted = thunder.jit(rmsnorm, executors=[nvfuserex])",
        *(["nvfuserex.set_fuel(1)  # the suite's unfused-backward state"] if fuel else []),
        "y = jitted(x, w)",
        "y.backward(g, retain_graph=True)",
        *(["nvfuserex.set_fuel(FUEL_LEVEL.UNLIMITED)"] if fuel else []),
        "trace = thunder.last_backward_traces(jitted)[-1]",
        "print(trace)",
        "print('nvFuser fusions in the backward:', len(get_fusions(trace)))",
        "",
        "flush = torch.empty(256 << 20, dtype=torch.uint8, device='cuda')",
        "start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)",
        "times = []",
        "for _ in range(20):",
        "    x.grad = w.grad = None",
        "    flush.zero_()  # L2 flushed before each call",
        "    start.record()",
        "    y.backward(g, retain_graph=True)",
        "    end.record()",
        "    end.synchronize()",
        "    times.append(start.elapsed_time(end) * 1000)",
        "print(f'backward: median {sorted(times)[10]:.1f} us over 20 calls (host and kernels)')",
    ]
    return "\n".join(lines) + "\n"


def reproducer(
    variant: str, dtype: str, shape: str, head: PointCapture | None, thunder_variant: str
) -> tuple[str, str]:
    """(what it is, the script) for the point; the hand-written fusion's from its capture."""
    if variant == REFERENCE:
        captured = head.variants.get("nvfuser") if head else None
        if captured is None or not captured.repro:
            raise ValueError(f"no captured nvFuser repro for {dtype} {shape}")
        return (
            "nvFuser's own repro script (fd.last_repro_script(), captured at head)",
            captured.repro,
        )
    return "a Thunder script", thunder_script(variant, dtype, shape, thunder_variant)
