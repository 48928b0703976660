"""A reproducer for a catalog fusion other than RMSNorm backward (bot/fusion/repro.py has
RMSNorm backward's standalone scripts and the shared timing loop): a short script on the
suite's own definition of the fusion, written from the point's parameters alone."""

from __future__ import annotations

from bot.fusion.names import fusion_title, known, timed_call
from bot.fusion.repro_parts import DTYPES, THUNDER_VARIANTS, mn, timing
from bot.results.types import REFERENCE


def catalog_script(
    fusion: str, variant: str, dtype: str, shape: str, thunder_variant: str = "stock"
) -> str:
    """Another fusion of the catalog at one point: a short script on the suite's own definition
    of the math (benchmarks/fusions/), run in a checkout of the suite's main branch (never the
    PR's code, which is not asked to be run). The fusion's math is the suite's: writing each
    one out here again would be a second copy to keep in step."""
    if not known(fusion) or dtype not in DTYPES:
        raise ValueError(f"no reproducer for {fusion} {dtype}")
    if variant not in (REFERENCE, *THUNDER_VARIANTS):
        raise ValueError(f"no reproducer for the {variant} variant")
    m, n = mn(shape)
    call = timed_call(fusion)
    head = [
        f"# {fusion_title(fusion)}, {variant} {dtype} {shape}, written by fusion-perfbot from the",
        "# point's parameters. Run on one CUDA GPU with torch, nvFuser and Thunder, in a checkout",
        "# of the suite's main branch (its math and inputs: benchmarks/fusions/).",
        "import torch",
    ]
    setup = [
        "",
        f"f = FUSIONS[{fusion!r}]",
        f"inputs = f.make_inputs({m}, {n}, {dtype!r}, 0)",
    ]
    if variant == REFERENCE:
        lines = [
            *head,
            "from nvfuser_direct import FusionDefinition",
            "",
            "from benchmarks.fusions.catalog import FUSIONS",
            *setup,
            "args = f.fusion_args(inputs)",
            "with FusionDefinition() as fd:",
            f"    f.define(fd, {dtype!r})",
            "print(fd)  # the hand-written definition",
            "fd.execute(args)",
            "",
            *timing("fd.execute(args)", "fusion (fd.execute)"),
        ]
        return "\n".join(lines) + "\n"
    fn = "f.prims" if variant == "thunder-prims" else "f.functional"
    fuel = thunder_variant == "unfused-backward"
    backward = call == "backward"
    lines = [
        *head,
        "import thunder",
        "from thunder.examine import get_fusions",
        "from thunder.executors.nvfuserex import nvfuserex",
        *(["from thunder.extend import FUEL_LEVEL"] if fuel else []),
        "",
        "from benchmarks.fusions.catalog import FUSIONS",
        *setup,
        "args = [inputs[k].detach().clone().requires_grad_() if k in f.grad_inputs else inputs[k]",
        "        for k in f.call_inputs]",
        f"jitted = thunder.jit({fn}, executors=[nvfuserex])",
        *(["nvfuserex.set_fuel(1)  # the suite's unfused-backward state"] if fuel else []),
        "y = jitted(*args)",
        *(["y.backward(inputs['grad'], retain_graph=True)"] if backward else []),
        *(["nvfuserex.set_fuel(FUEL_LEVEL.UNLIMITED)"] if fuel else []),
        f"trace = thunder.last_{'backward_' if backward else ''}traces(jitted)[-1]",
        "print(trace)",
        f"print('nvFuser fusions in the {call}:', len(get_fusions(trace)))",
        "",
        *(
            timing(
                "y.backward(inputs['grad'], retain_graph=True)",
                "backward",
                "for a in args: a.grad = None",
            )
            if backward
            else timing("jitted(*args)", "forward")
        ),
    ]
    return "\n".join(lines) + "\n"
