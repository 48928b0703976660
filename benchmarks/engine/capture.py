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
from functools import partial
from pathlib import Path
from typing import Any

from ..fusions.catalog import FUSIONS, parse_fusions
from ..fusions.spec import DEFAULT_FUSION
from . import variants as variants_mod
from .capture_files import Capture, launch_profile_of, profile_of, proxies
from .config import Shape, sizes_of
from .variants import NvfuserBuild, ThunderBuild, Variant

#: How a capture profiles one call: :func:`launch_profile_of` or nvFuser's :func:`profile_of`.
Profiler = Callable[[Callable[[], Any]], Any]


def capture_nvfuser(cap: Capture, built: NvfuserBuild, text: str | None, profile: Profiler) -> None:
    """The hand-written fusion's definition (as printed before its first execute), the profile
    of one execute, and its reproducer."""
    fd, args = built.fd, built.args
    if text is None:
        cap.errors["definition"] = "the definition could not be printed when it was built"
    else:
        cap.write("definition.py.txt", text + "\n")
    cap.step("profile", lambda: cap.write_json("profile.json", profile(lambda: fd.execute(args))))

    def repro() -> None:
        fd.execute(args, save_repro_inputs=True)
        cap.write("repro.py.txt", fd.last_repro_script() + "\n")

    cap.step("repro", repro)


def capture_thunder(cap: Capture, built: ThunderBuild, profile: Profiler) -> None:
    """Thunder's traces, fusions and profile of the timed call: the backward of a backward
    fusion, else the function itself."""
    import thunder

    jitted = built.jitted
    fwd = cap.step("forward traces", lambda: thunder.last_traces(jitted))
    bwd = (
        cap.step("backward traces", lambda: thunder.last_backward_traces(jitted))
        if built.backward
        else None
    )
    if fwd:
        cap.write("forward_trace.py.txt", str(fwd[-1]) + "\n")
    if bwd:
        cap.write("backward_trace.py.txt", str(bwd[-1]) + "\n")
        cap.step("saved", lambda: cap.write_json("saved.json", proxies(bwd[-1].args)))
    timed = bwd if built.backward else fwd
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
    cap.step("profile", lambda: cap.write_json("profile.json", profile(built.call)))


def capture_variant(
    folder: Path,
    variant: Variant | None,
    build_error: str | None,
    profile: Profiler = launch_profile_of,
) -> list[str]:
    """One variant's capture, from the variant the measurement built and timed (its failed
    steps, sorted); ``variant`` None when it did not build (``build_error`` says why).
    ``profile``: :func:`launch_profile_of` in a process that timed with torch.profiler (the
    measuring one), nvFuser's own :func:`profile_of` in a process of its own (``main``)."""
    import thunder

    cap = Capture(folder)
    built = variant.built if variant is not None else None
    if variant is None or built is None:
        cap.errors["build"] = build_error or "the variant was not built"
    elif isinstance(built, NvfuserBuild):
        text = variant.fingerprint.text if variant.fingerprint is not None else None
        cap.step("nvfuser", partial(capture_nvfuser, cap, built, text, profile))
    else:
        cap.step("thunder", partial(capture_thunder, cap, built, profile))
    cap.write_json("versions.json", {"thunder": thunder.__version__})
    cap.close()
    return sorted(cap.errors)


#: The variants a capture covers: the hand-written fusion and Thunder's (not the context).
CAPTURED = ("nvfuser", "thunder-prims", "thunder-func")


def _points(text: str) -> list[tuple[str, Shape]]:
    out = []
    for item in text.split(","):
        dtype, dims = item.split(":")
        m, n = dims.split("x")
        out.append((dtype, Shape(int(m), int(n))))
    return out


def fusions_to_capture(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The fusions a run's ``--capture`` captures: those it measured (``RMSNORM_BENCH_FUSIONS``,
    empty: all) that ``RMSNORM_BENCH_CAPTURE_FUSIONS`` names (empty: all of them).

    Why a second list: a caller may want fewer (``PERFBOT_CAPTURE_FUSIONS`` in bench-pr.yml).
    Since issue 39 the measuring process captures what it built, about 1 s a process for all
    14 fusions on an H100 (data/h100-issue39); a process of its own took 23-25 s for RMSNorm
    backward's pr points and 40-53 s more for the others on the H200."""
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
        names = [v for v in CAPTURED if v != "thunder-func" or fusion.functional]
        for dtype, shape in points:
            inputs = fusion.make_inputs(shape.m, shape.n, dtype, 0)
            for variant_name in names:
                folder = (
                    side_folder(args.out, args.state, name)
                    / f"{dtype}_{shape.label}"
                    / variant_name
                )
                print(
                    f"=== capture {args.state} {name} {dtype} {shape.label} {variant_name}",
                    flush=True,
                )
                built: Variant | None = None
                error = None
                try:
                    built = variants_mod.build(
                        variant_name, inputs, dtype, args.thunder_variant, fusion
                    )
                except Exception as exc:
                    error = f"{exc.__class__.__name__}: {exc}"
                failed = capture_variant(folder, built, error, profile_of)
                print(f"=== done {variant_name}: failed steps {failed}", flush=True)
                del built
    return 0


if __name__ == "__main__":
    sys.exit(main())
