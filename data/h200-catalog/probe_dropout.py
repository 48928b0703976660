"""Does Thunder's dropout+norm run through its nvFuser executor, with and without
``disable_replace_uniform`` (../../../shared/NOTES.md section 8: recent Thunder builds fail the
dropout baselines without it)? One line of JSON per (fusion, variant, option), run on the GPU.
"""

from __future__ import annotations

import json
import sys
import traceback


def main() -> int:
    import thunder
    import torch
    from thunder.executors.nvfuserex import nvfuserex

    from benchmarks.fusions.catalog import FUSIONS

    for name in ("dropout_rmsnorm_fwd", "dropout_rmsnorm_bwd", "dropout_layernorm_bwd"):
        f = FUSIONS[name]
        for variant, fn in (("thunder-prims", f.prims), ("thunder-func", f.functional)):
            for disable in (False, True):
                row = {"fusion": name, "variant": variant, "disable_replace_uniform": disable}
                try:
                    inputs = f.make_inputs(256, 1024, "bfloat16", 0)
                    leaves = {
                        k: inputs[k].detach().clone().requires_grad_(k in f.grad_inputs)
                        for k in f.call_inputs
                    }
                    opts = {"disable_replace_uniform": True} if disable else {}
                    jfn = thunder.jit(fn, executors=[nvfuserex], **opts)
                    out = jfn(*(leaves[k] for k in f.call_inputs))
                    if f.direction == "backward":
                        out.backward(inputs["grad"])
                        trace = thunder.last_backward_traces(jfn)[-1]
                        row["backward_fusions"] = str(trace).count("nvFusion")
                        row["backward_uses_uniform"] = "uniform" in str(trace)
                    torch.cuda.synchronize()
                    row["ok"] = True
                except Exception as exc:
                    row["ok"] = False
                    row["error"] = f"{exc.__class__.__name__}: {exc}"[:400]
                    traceback.print_exc()
                print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
