"""A reproducer for the regressed point: a script a maintainer runs on one GPU, no suite needed.

Every script is written by the bot from the point's parameters (variant, dtype, shape), never
taken from the run's artifact: an issue in another organisation's tracker must not invite its
maintainers to run text that the PR's code produced (a captured ``fd.last_repro_script()``
stays in the run's artifact). For nvFuser's hand-written fusion it is the suite's definition
(benchmarks/fusions/rmsnorm.py) in ``nvfuser_direct`` with the suite's inputs, checked
against float64 autograd; for Thunder a short script that jits the same function with the
nvFuser executor and prints the backward trace and its nvFuser fusions. Both time the call
with CUDA events around 20 calls, L2 flushed: enough to see the regression and to bisect with.
"""

from __future__ import annotations

from bot.fusion.repro_catalog import catalog_script
from bot.fusion.repro_parts import DTYPES, mn, timing
from bot.fusion.types import PointCapture
from bot.results.types import DEFAULT_FUSION, REFERENCE

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


def thunder_script(variant: str, dtype: str, shape: str, thunder_variant: str = "stock") -> str:
    """``thunder_variant`` "unfused-backward" reproduces the suite's deliberately slower state
    (the nvFuser executor given fuel for one region, which the forward takes)."""
    if variant not in _FUNCTIONS or dtype not in DTYPES:
        raise ValueError(f"no Thunder reproducer for {variant} {dtype}")
    m, n = mn(shape)
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
        *timing("y.backward(g, retain_graph=True)", "backward", "x.grad = w.grad = None"),
    ]
    return "\n".join(lines) + "\n"


_NVDTYPES = {"bfloat16": "BFloat16", "float16": "Half", "float32": "Float"}


def nvfuser_script(dtype: str, shape: str) -> str:
    """The hand-written backward fusion at one point, as the suite defines and feeds it."""
    if dtype not in DTYPES:
        raise ValueError(f"no nvFuser reproducer for {dtype}")
    m, n = mn(shape)
    nv = _NVDTYPES[dtype]
    upcast = dtype != "float32"
    lines = [
        f"# RMSNorm backward, the hand-written nvFuser fusion, {dtype} {shape}: the suite's",
        "# definition and inputs (benchmarks/fusions/rmsnorm.py), written by fusion-perfbot from",
        "# the point's parameters. Run on one CUDA GPU with torch and nvFuser (nvfuser_direct).",
        "import torch",
        "from nvfuser_direct import DataType, FusionDefinition",
        "",
        "EPS = 1e-5",
        "gen = torch.Generator(device='cuda').manual_seed(0)",
        f"x = torch.randn({m}, {n}, device='cuda', dtype=torch.{dtype}, generator=gen)",
        f"g = torch.randn({m}, {n}, device='cuda', dtype=torch.{dtype}, generator=gen)",
        f"w = torch.randn({n}, device='cuda', dtype=torch.{dtype}, generator=gen)",
        "rms = torch.sqrt((x.float() ** 2).mean(1, keepdim=True) + EPS)  # what the forward saves",
        "",
        "with FusionDefinition() as fd:",
        "    def tensor(shape, contiguity, dtype):",
        "        return fd.define_tensor(shape=shape, contiguity=contiguity, dtype=dtype,"
        " is_cpu=False)",
        "",
        f"    tx = tensor([-1, -1], [True, True], DataType.{nv})",
        "    trms = tensor([-1, 1], [True, None], DataType.Float)",
        f"    tg = tensor([-1, -1], [True, True], DataType.{nv})",
        f"    tw = tensor([-1], [True], DataType.{nv})",
        *(
            [
                "    tx, tg, tw = (fd.ops.cast(t, DataType.Float) for t in (tx, tg, tw))",
            ]
            if upcast
            else []
        ),
        "    shape = tx.shape()",
        "    inv_rms = fd.ops.reciprocal("
        "fd.ops.broadcast_in_dim(trms, shape=shape, broadcast_dims=[0, 1]))",
        "    gw = fd.ops.mul(tg, fd.ops.broadcast_in_dim(tw, shape=shape, broadcast_dims=[1]))",
        "    grad_weight = fd.ops.sum(fd.ops.mul(tg, fd.ops.mul(tx, inv_rms)), [0], False,"
        " DataType.Null)",
        "    row_dot = fd.ops.sum(fd.ops.mul(gw, tx), [1], False, DataType.Null)",
        "    row_dot_b = fd.ops.broadcast_in_dim(row_dot, shape=shape, broadcast_dims=[0])",
        "    inv_rms3 = fd.ops.mul(fd.ops.mul(inv_rms, inv_rms), inv_rms)",
        "    n = tx.size(1) if hasattr(tx, 'size') else fd.ops.size(tx, 1)",
        "    coef = fd.ops.div(fd.ops.mul(row_dot_b, inv_rms3), n)",
        "    grad_input = fd.ops.sub(fd.ops.mul(gw, inv_rms), fd.ops.mul(tx, coef))",
        *(
            [
                f"    grad_input = fd.ops.cast(grad_input, DataType.{nv})",
                f"    grad_weight = fd.ops.cast(grad_weight, DataType.{nv})",
            ]
            if upcast
            else []
        ),
        "    fd.add_output(grad_input)",
        "    fd.add_output(grad_weight)",
        "",
        "grad_input, grad_weight = fd.execute([x, rms, g, w])",
        "xd, wd = x.double().requires_grad_(), w.double().requires_grad_()",
        "(wd * (xd / torch.sqrt((xd**2).mean(1, keepdim=True) + EPS))).backward(g.double())",
        "print('largest error against float64 autograd: grad_input',",
        "      (grad_input.double() - xd.grad).abs().max().item(), 'grad_weight',",
        "      (grad_weight.double() - wd.grad).abs().max().item())",
        "",
        *timing("fd.execute([x, rms, g, w])", "fusion (fd.execute)"),
    ]
    return "\n".join(lines) + "\n"


def reproducer(
    variant: str,
    dtype: str,
    shape: str,
    head: PointCapture | None,
    thunder_variant: str,
    fusion: str = DEFAULT_FUSION,
) -> tuple[str, str]:
    """(what it is, the script) for the point, written from its parameters alone; ``head``
    (the capture) is not read: what the PR's code wrote there is never posted."""
    if fusion != DEFAULT_FUSION:
        what = "a script of the hand-written fusion" if variant == REFERENCE else "a Thunder script"
        return (
            f"{what}, on the suite's definition (run in its checkout)",
            catalog_script(fusion, variant, dtype, shape, thunder_variant),
        )
    if variant == REFERENCE:
        return (
            "a script of the hand-written fusion (nvfuser_direct), written by the bot",
            nvfuser_script(dtype, shape),
        )
    return "a Thunder script", thunder_script(variant, dtype, shape, thunder_variant)
