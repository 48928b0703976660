"""What ran inside each fusion, per point and variant: the raw material of root-cause hints.

For each fusion of the catalog and point it writes, under
``OUT/<state>/[<fusion>/]<dtype>_<shape>/<variant>/`` (RMSNorm backward's points directly in
the state's folder, as before the catalog; every other fusion's in a folder of its name):

- ``definition.py.txt``: the nvFuser definition of each fusion (the hand-written one; every
  nvFuser region of Thunder's final trace of the timed call: the backward's for a backward
  fusion, the forward's for a forward one);
- ``forward_trace.py.txt`` / ``backward_trace.py.txt``: Thunder's last forward and backward traces;
- ``saved.json``: what the forward saved for the backward (name, shape, dtype; backward only);
- ``profile.json``: nvFuser's own profile of one timed call (``nvfuser_direct``'s
  ``PythonProfiler``: fusions, segments, kernels with scheduler, launch and registers), every
  field the build exposes, so that a missing one is seen, not guessed;
- ``repro.py.txt``: nvFuser's reproducer of the fusion where the build offers one;
- ``errors.json``: each capture step that failed, with its error (a step's failure never loses
  the others).

Run on the GPU machine:
``python3 -m benchmarks.engine.capture --out DIR --state NAME [--fusions a,b|all]
[--thunder-variant ...] [--size-set pr | --points bfloat16:2048x8192,...]``;
``run_gpu.sh --capture`` writes them beside the run's results as
``results/<machine>/<commit>.captures/``, where the bot looks (bot/commands/captures.py).
``NVFUSER_DUMP=scheduler_params,launch_param`` in the environment adds nvFuser's own dump to
stdout, between ``=== capture`` marker lines.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..fusions.catalog import FUSIONS, parse_fusions
from ..fusions.spec import DEFAULT_FUSION, Fusion
from .capture_files import Capture, profile_of, proxies
from .config import Shape, sizes_of


def capture_nvfuser(cap: Capture, fusion: Fusion, inputs: dict[str, Any], dtype_name: str) -> None:
    from nvfuser_direct import FusionDefinition

    args = fusion.fusion_args(inputs)
    with FusionDefinition() as fd:
        fusion.define(fd, dtype_name)
    cap.step("definition", lambda: cap.write("definition.py.txt", repr(fd) + "\n"))
    cap.step(
        "profile", lambda: cap.write_json("profile.json", profile_of(lambda: fd.execute(args)))
    )

    def repro() -> None:
        fd.execute(args, save_repro_inputs=True)
        cap.write("repro.py.txt", fd.last_repro_script() + "\n")

    cap.step("repro", repro)


def capture_thunder(
    cap: Capture,
    fusion: Fusion,
    fn: Callable[..., Any],
    inputs: dict[str, Any],
    thunder_variant: str,
) -> None:
    """Thunder's traces, fusions and profile of the timed call: the backward of a backward
    fusion (its forward run once, as variants.py does), else the function itself."""
    import thunder
    import torch
    from thunder.executors.nvfuserex import nvfuserex
    from thunder.extend import FUEL_LEVEL

    jitted = thunder.jit(fn, executors=[nvfuserex])
    backward = fusion.direction == "backward"
    args = [
        inputs[k].detach().clone().requires_grad_() if k in fusion.grad_inputs else inputs[k]
        for k in fusion.call_inputs
    ]
    # The same fuel as variants.py's unfused-backward: the forward takes the one fusion region.
    nvfuserex.set_fuel(1 if thunder_variant == "unfused-backward" else FUEL_LEVEL.UNLIMITED)
    try:
        y = jitted(*args)
        if backward:
            y.backward(inputs["grad"], retain_graph=True)
    finally:
        nvfuserex.set_fuel(FUEL_LEVEL.UNLIMITED)
    torch.cuda.synchronize()
    fwd = cap.step("forward traces", lambda: thunder.last_traces(jitted))
    bwd = (
        cap.step("backward traces", lambda: thunder.last_backward_traces(jitted))
        if backward
        else None
    )
    if fwd:
        cap.write("forward_trace.py.txt", str(fwd[-1]) + "\n")
    if bwd:
        cap.write("backward_trace.py.txt", str(bwd[-1]) + "\n")
        cap.step("saved", lambda: cap.write_json("saved.json", proxies(bwd[-1].args)))
    timed = bwd if backward else fwd
    if timed:
        final = timed[-1]

        def definitions() -> None:
            from thunder.examine import get_fusions

            texts = []
            for entry in get_fusions(final):
                name, fused = entry[0], entry[1]
                fd = getattr(fused, "last_used", None) or fused
                texts.append(f"# ===== {name}\n{fd!r}\n")
            cap.write("definition.py.txt", "".join(texts) or "# no nvFuser fusion in the trace\n")

        cap.step("definitions", definitions)

    def call() -> None:
        if not backward:
            jitted(*args)
            return
        for k, arg in zip(fusion.call_inputs, args, strict=True):
            if k in fusion.grad_inputs:
                arg.grad = None
        y.backward(inputs["grad"], retain_graph=True)

    cap.step("profile", lambda: cap.write_json("profile.json", profile_of(call)))


def _points(text: str) -> list[tuple[str, Shape]]:
    out = []
    for item in text.split(","):
        dtype, dims = item.split(":")
        m, n = dims.split("x")
        out.append((dtype, Shape(int(m), int(n))))
    return out


def _capture_one(
    folder: Path,
    fusion: Fusion,
    variant: str,
    inputs: dict[str, Any],
    dtype: str,
    thunder_variant: str,
) -> list[str]:
    import thunder

    cap = Capture(folder)
    if variant == "nvfuser":
        cap.step("nvfuser", lambda: capture_nvfuser(cap, fusion, inputs, dtype))
    else:
        fn = fusion.prims if variant == "thunder-prims" else fusion.functional
        assert fn is not None
        cap.step("thunder", lambda: capture_thunder(cap, fusion, fn, inputs, thunder_variant))
    cap.write_json("versions.json", {"thunder": thunder.__version__})
    cap.close()
    return sorted(cap.errors)


def fusions_to_capture(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The fusions a run's ``--capture`` captures: those it measured (``RMSNORM_BENCH_FUSIONS``,
    empty: all) that ``RMSNORM_BENCH_CAPTURE_FUSIONS`` names (empty: all of them).

    Why a second list: a capture costs GPU time a side (on the H200, 23-25 s for RMSNorm
    backward's pr points, 40-53 s more for the 13 other fusions': data/h200-catalog/README.md),
    and a PR job's budget is 6 minutes; bench-pr.yml captures RMSNorm backward unless the
    repository says more (``PERFBOT_CAPTURE_FUSIONS``)."""
    env = os.environ if env is None else env
    measured = parse_fusions(env.get("RMSNORM_BENCH_FUSIONS", ""))
    wanted = set(parse_fusions(env.get("RMSNORM_BENCH_CAPTURE_FUSIONS", "")))
    return tuple(f for f in measured if f in wanted)


def side_folder(out: Path, state: str, fusion: str) -> Path:
    """Where one fusion's points go: the state's folder for RMSNorm backward (its layout from
    before the catalog), a folder named by the fusion inside it for the others."""
    return out / state if fusion == DEFAULT_FUSION else out / state / fusion


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python3 -m benchmarks.engine.capture",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--state", required=True, help="folder name of this state, e.g. stock-0.2.6")
    p.add_argument("--thunder-variant", default="stock", choices=["stock", "unfused-backward"])
    p.add_argument("--points", default=None, help="dtype:MxN,... (default: the size set's)")
    p.add_argument("--size-set", default="pr", help="the size set whose points to capture")
    p.add_argument(
        "--fusions",
        default=None,
        help="fusion names, comma separated, or all (default: the fusions the run measured "
        "that $RMSNORM_BENCH_CAPTURE_FUSIONS names: see fusions_to_capture)",
    )
    args = p.parse_args(argv)
    fusions = parse_fusions(args.fusions) if args.fusions is not None else fusions_to_capture()
    for name in fusions:
        fusion = FUSIONS[name]
        if args.points:
            points = _points(args.points)
        else:
            shapes, dtypes = sizes_of(name, args.size_set)
            points = [(dtype, shape) for dtype in dtypes for shape in shapes]
        variants = ["nvfuser", "thunder-prims"] + (["thunder-func"] if fusion.functional else [])
        for dtype, shape in points:
            inputs = fusion.make_inputs(shape.m, shape.n, dtype, 0)
            for variant in variants:
                folder = (
                    side_folder(args.out, args.state, name) / f"{dtype}_{shape.label}" / variant
                )
                print(
                    f"=== capture {args.state} {name} {dtype} {shape.label} {variant}", flush=True
                )
                failed = _capture_one(folder, fusion, variant, inputs, dtype, args.thunder_variant)
                print(f"=== done {variant}: failed steps {failed}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
