"""nvFuser definition text as a small model (bot/fusion/summary.py summarises it).

The definitions are the one place where Thunder's program and the hand-written fusion can be
read side by side (the timing says *that* they differ, this says *how*): which dtypes are cast
to which, which math is taken, what is reduced and broadcast, whether the extents are baked in.
The parser reads only the line forms nvFuser's printer writes and refuses anything else with
the line number, because a silently skipped op would make two different programs look alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: nvFuser's and Thunder's dtype names, in the short words the findings use.
DTYPES = {
    "Float": "fp32", "Double": "fp64", "BFloat16": "bf16", "Half": "fp16", "Int": "int64",
    "Int32": "int32", "Bool": "bool", "ComplexFloat": "c64", "ComplexDouble": "c128",
    "float32": "fp32", "float64": "fp64", "bfloat16": "bf16", "float16": "fp16",
    "int64": "int64", "int32": "int32", "bool8": "bool",
}  # fmt: skip
WIDE = ("fp32", "fp64")
#: Width in bytes, to tell a narrowing cast (information lost) from a widening one.
BYTES = {"fp64": 8, "fp32": 4, "bf16": 2, "fp16": 2, "int64": 8, "int32": 4, "bool": 1}
MATH = ("pow", "sqrt", "rsqrt", "reciprocal", "div")
REDUCTIONS = ("sum", "max", "min", "prod", "var", "var_mean")
BROADCASTS = ("broadcast", "expand", "broadcast_in_dim")
#: Ops that draw random numbers: a tensor made from scalars alone (a seed, an offset, bounds).
RANDOM = ("uniform", "normal", "rand_like", "randn_like")
#: Ops that make a tensor from scalars alone (no tensor input, yet a tensor result).
CREATIONS = (*RANDOM, "full", "iota", "zeros", "ones")
#: Ops of a tensor whose result is a scalar (an extent), not a tensor.
SCALAR_OPS = ("size", "numel")

HEADER = re.compile(r"def \w+\(fd ?: ?FusionDefinition\) ?-> ?None ?:")
ASSIGN = re.compile(r"(?P<targets>\w+(?:, *\w+)*) = fd\.(?P<call>define_tensor|define_scalar|"
                    r"ops\.\w+)\((?P<args>.*)\)")  # fmt: skip
OUTPUT = re.compile(r"fd\.add_output\((?P<value>\w+)(?:, .*)?\)")
#: A value's name, as opposed to a literal (2.00000, -inf, True, [c0, c1]).
VALUE = re.compile(r"(?!(?:True|False|None|inf|nan)$)[A-Za-z_]\w*")
NUMBER = re.compile(r"-?[0-9]+(?P<float>\.[0-9]*(?:e[-+]?[0-9]+)?)?|-?inf|nan")


class DefinitionError(ValueError):
    """Definition text the parser does not know (the message says which line)."""


def short_dtype(name: str) -> str:
    """``DataType.BFloat16`` or ``thunder.dtypes.bfloat16`` as ``bf16``; unknown names kept."""
    last = name.rsplit(".", 1)[-1]
    return DTYPES.get(last, last)


@dataclass(frozen=True)
class Input:
    name: str
    dtype: str
    shape: tuple[int, ...]  # -1: a symbolic extent


@dataclass(frozen=True)
class Op:
    target: str
    op: str  # "cast", "sum", "mul", ...
    inputs: tuple[str, ...]  # the values it reads (literals are left out)
    dtype: str  # of the target
    args: dict[str, str] = field(default_factory=dict)  # keyword arguments, as written


@dataclass(frozen=True)
class Fusion:
    inputs: tuple[Input, ...]
    ops: tuple[Op, ...]
    outputs: tuple[str, ...]
    dtypes: dict[str, str]  # every value's dtype
    tensors: frozenset[str]  # which values are tensors (the rest are scalars)


#: Longer definitions are not read (a hint, never worth a stuck bot).
MAX_LINES = 5000


def _shape(text: str, number: int) -> tuple[int, ...]:
    try:
        return tuple(int(extent) for extent in _list(text))
    except ValueError:
        raise DefinitionError(f"line {number}: a shape that is not whole numbers") from None


def parse(text: str) -> Fusion:
    """One fusion's definition text, as ``FusionDefinition``'s printer writes it."""
    inputs: list[Input] = []
    ops: list[Op] = []
    outputs: list[str] = []
    dtypes: dict[str, str] = {}
    tensors: set[str] = set()
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        # The real definitions are tens of lines; the round-trip walk is quadratic in length.
        raise DefinitionError(f"{len(lines)} lines: more than {MAX_LINES}, not read")
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#") or HEADER.fullmatch(line):
            continue
        if out := OUTPUT.fullmatch(line):
            outputs.append(_known(out["value"], dtypes, number))
            continue
        match = ASSIGN.fullmatch(line)
        if match is None:
            raise DefinitionError(f"line {number}: not an nvFuser definition line: {line[:100]}")
        targets = [name.strip() for name in match["targets"].split(",")]
        again = [name for name in targets if name in dtypes]
        if again:
            # nvFuser's printer names each value once; a reassignment could make a cast cycle.
            raise DefinitionError(f"line {number}: {again[0][:40]} is assigned twice")
        positional, keywords = _arguments(match["args"], number)
        call = match["call"]
        if call == "define_tensor":
            dtype = short_dtype(keywords.get("dtype", "Float"))
            shape = _shape(keywords.get("shape", "[]"), number)
            inputs.append(Input(targets[0], dtype, shape))
            dtypes[targets[0]] = dtype
            tensors.add(targets[0])
            continue
        if call == "define_scalar":
            dtype = keywords.get("dtype") or _literal_dtype(positional[0] if positional else "0")
            dtypes[targets[0]] = short_dtype(dtype)
            continue
        op = call.removeprefix("ops.")
        read = tuple(_known(arg, dtypes, number) for arg in positional if VALUE.fullmatch(arg))
        held = [name for name in read if name in tensors]
        dtype = _result_dtype(held or read, positional, keywords, dtypes)
        is_tensor = op in CREATIONS or (op not in SCALAR_OPS and bool(held))
        for target in targets:
            dtypes[target] = dtype
            if is_tensor:
                tensors.add(target)
            ops.append(Op(target, op, read, dtype, keywords))
    return Fusion(tuple(inputs), tuple(ops), tuple(outputs), dtypes, frozenset(tensors))


def _known(name: str, dtypes: dict[str, str], number: int) -> str:
    if name not in dtypes:  # a typo or a line the printer wrote that the parser skipped
        raise DefinitionError(f"line {number}: {name} is used before it is defined")
    return name


def _result_dtype(
    read: list[str] | tuple[str, ...], positional: list[str], keywords: dict[str, str],
    dtypes: dict[str, str],
) -> str:  # fmt: skip
    """An explicit dtype= (cast's target); else fp32 if any input is fp32/fp64, else the first
    input's; the tensor inputs decide where there are any (a scalar does not promote them)."""
    if "dtype" in keywords:
        return short_dtype(keywords["dtype"])
    seen = [dtypes[name] for name in read]
    if any(dtype in WIDE for dtype in seen):
        return "fp32"
    if seen:
        return seen[0]
    return short_dtype(_literal_dtype(positional[0])) if positional else "fp32"


def _literal_dtype(literal: str) -> str:
    match = NUMBER.fullmatch(literal)
    return "Double" if match is None or match["float"] is not None or "." in literal else "Int"


def _arguments(text: str, number: int) -> tuple[list[str], dict[str, str]]:
    """Split ``a, b, dims=[0, 1], dtype=DataType.Float`` at the top-level commas."""
    parts: list[str] = []
    depth, start = 0, 0
    for index, char in enumerate(text):
        depth += (char in "[(") - (char in "])")
        if char == "," and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
    if depth != 0:
        raise DefinitionError(f"line {number}: unbalanced brackets in {text[:100]}")
    if text[start:].strip():
        parts.append(text[start:].strip())
    positional = [part for part in parts if not re.match(r"\w+=", part)]
    keywords = dict(part.split("=", 1) for part in parts if re.match(r"\w+=", part))
    return positional, keywords


def _list(text: str) -> list[str]:
    inner = text.strip().removeprefix("[").removesuffix("]").strip()
    return [item.strip() for item in inner.split(",")] if inner else []
