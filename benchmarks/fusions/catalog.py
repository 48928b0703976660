"""The catalog: every fusion the suite measures, in the order reports list them.

Adding a fusion is one module beside this one (fill in a :class:`~.spec.Fusion`: docs/DATA.md
says how) and one line here. RMSNorm backward comes first and is the default: every result,
history and issue from before the catalog names it.
"""

from __future__ import annotations

from . import dropout_norm, gelu, layernorm, rmsnorm, silu_mul, softmax
from .spec import DEFAULT_FUSION, Fusion

DEFAULT = DEFAULT_FUSION

FUSIONS: dict[str, Fusion] = {
    f.name: f
    for f in (
        rmsnorm.BACKWARD,
        rmsnorm.FORWARD,
        layernorm.FORWARD,
        layernorm.BACKWARD,
        dropout_norm.RMSNORM_FORWARD,
        dropout_norm.RMSNORM_BACKWARD,
        dropout_norm.LAYERNORM_FORWARD,
        dropout_norm.LAYERNORM_BACKWARD,
        softmax.FORWARD,
        softmax.BACKWARD,
        gelu.FORWARD,
        gelu.BACKWARD,
        silu_mul.FORWARD,
        silu_mul.BACKWARD,
    )
}


def parse_fusions(text: str) -> tuple[str, ...]:
    """A comma list of fusion names (empty or ``all``: the whole catalog), in catalog order.

    Why a list: a bisect of one fusion's regression, or a nightly shard, measures only some."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names or names == ["all"]:
        return tuple(FUSIONS)
    unknown = sorted(set(names) - set(FUSIONS))
    if unknown:
        raise ValueError(
            f"RMSNORM_BENCH_FUSIONS: unknown {', '.join(unknown)} (known: {', '.join(FUSIONS)})"
        )
    return tuple(f for f in FUSIONS if f in names)
