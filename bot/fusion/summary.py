"""The summary of a side's nvFuser definitions that the comparer diffs (pure).

What a maintainer compares by eye: cast pairs and the round trips among them, the math taken,
what is reduced and broadcast, whether extents are fixed, how many fusions. Kept apart from the
parser (bot/fusion/definition.py), which only turns text into the model this reads.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from bot.fusion.definition import (
    BROADCASTS,
    BYTES,
    MATH,
    REDUCTIONS,
    DefinitionError,
    Fusion,
    Input,
    Op,
    parse,
)

__all__ = ["DefinitionError", "RoundTrip", "Summary", "round_trips", "summarise"]


@dataclass(frozen=True)
class RoundTrip:
    """A value narrowed and widened back (fp32 -> bf16 -> fp32): precision lost for nothing."""

    chain: tuple[str, ...]  # ("bf16", "fp32", "bf16", "fp32"): from where the walk began
    origin: Input | None  # the fusion input the chain starts at, else a computed value
    narrowed: str  # the op whose result is narrowed ("sqrt", "sum")
    between: tuple[str, ...]  # the ops between narrowing and widening back ("expand",)

    @property
    def words(self) -> str:
        return " -> ".join(self.chain)


@dataclass(frozen=True)
class Summary:
    """What the comparer diffs: every count it reports, over every fusion of one variant."""

    fusions: int
    ops: Counter[str]  # tensor ops only
    casts: Counter[str]  # "bf16->fp32": n (tensor casts only; scalar index casts are noise)
    math: Counter[str]  # of MATH, on tensors (scalar math is folded extents)
    reductions: Counter[str]  # "sum over [1]"
    broadcasts: Counter[str]  # of BROADCASTS
    inputs: tuple[Input, ...]
    round_trips: tuple[RoundTrip, ...]

    @property
    def fixed_extents(self) -> tuple[int, ...]:
        """The extents baked into the inputs, in order of appearance (1 is a broadcast, not
        a size)."""
        seen: list[int] = []
        for item in self.inputs:
            seen += [n for n in item.shape if n > 1 and n not in seen]
        return tuple(seen)

    @property
    def symbolic_extents(self) -> int:
        return sum(n == -1 for item in self.inputs for n in item.shape)


def summarise(definitions: tuple[str, ...]) -> Summary:
    """The summary of a variant's definitions (one text a fusion)."""
    fusions = [parse(text) for text in definitions]
    ops, casts, reductions, math = Counter[str](), Counter[str](), Counter[str](), Counter[str]()
    trips: list[RoundTrip] = []
    for fusion in fusions:
        for op in fusion.ops:
            if op.target not in fusion.tensors:
                continue  # scalar arithmetic: extents and constants, folded at compile time
            ops[op.op] += 1
            math[op.op] += op.op in MATH
            if op.op == "cast":
                casts[f"{fusion.dtypes[op.inputs[0]]}->{op.dtype}"] += 1
            if op.op in REDUCTIONS:
                reductions[f"{op.op} over {op.args.get('dims', op.args.get('dim', '[]'))}"] += 1
        trips += round_trips(fusion)
    return Summary(
        fusions=len(fusions),
        ops=ops,
        casts=casts,
        math=+math,
        reductions=reductions,
        broadcasts=Counter({name: ops[name] for name in BROADCASTS if ops[name]}),
        inputs=tuple(item for fusion in fusions for item in fusion.inputs),
        round_trips=tuple(trips),
    )


def round_trips(fusion: Fusion) -> list[RoundTrip]:
    """Every widening cast whose value was narrowed from that same dtype, through ops that
    keep the dtype (expand, broadcast, a same-dtype cast), traced back to where it began."""
    producer = {op.target: op for op in fusion.ops}
    inputs = {item.name: item for item in fusion.inputs}
    found = []
    for op in fusion.ops:
        if op.op != "cast" or op.target not in fusion.tensors:
            continue
        wide, narrow = op.dtype, fusion.dtypes[op.inputs[0]]
        if BYTES.get(narrow, 0) >= BYTES.get(wide, 0):
            continue
        between: list[str] = []
        source = _walk(op.inputs[0], fusion, producer, between, same_dtype=True)
        cast = producer.get(source)
        if cast is None or cast.op != "cast" or fusion.dtypes[cast.inputs[0]] != wide:
            continue
        made = producer.get(cast.inputs[0])
        chain = [wide, narrow, wide]
        start = cast.inputs[0]
        while True:  # further back: the casts and one-input ops that led here
            start = _walk(start, fusion, producer, [], same_dtype=False)
            earlier = producer.get(start)
            if earlier is None or earlier.op != "cast":
                break
            start = earlier.inputs[0]
            chain.insert(0, fusion.dtypes[start])
        narrowed, between = made.op if made else "input", between[::-1]
        found.append(RoundTrip(tuple(chain), inputs.get(start), narrowed, tuple(between)))
    return found


def _walk(
    name: str, fusion: Fusion, producer: dict[str, Op], through: list[str], same_dtype: bool
) -> str:
    """Back from `name` through ops of one tensor input (not casts, unless to the same dtype;
    not reductions); the value where the walk stops."""
    while (op := producer.get(name)) is not None:
        tensor_inputs = [arg for arg in op.inputs if arg in fusion.tensors]
        if len(tensor_inputs) != 1 or op.op in REDUCTIONS:  # a sum of x is not x
            break
        noop_cast = op.op == "cast" and fusion.dtypes[tensor_inputs[0]] == op.dtype
        if op.op == "cast" and not noop_cast:
            break
        if same_dtype and fusion.dtypes[tensor_inputs[0]] != op.dtype:
            break
        through.append(op.op)
        name = tensor_inputs[0]
    return name
