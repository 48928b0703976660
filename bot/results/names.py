"""The names a results artifact may carry, and the one check each passes before any use.

A fusion, a variant, a dtype, a shape and a machine are read from files a GPU runner wrote, that
is from code the bot does not trust, and every one of them ends up in text (the comment, an
issue's title and body, the commit status), in a command line a maintainer is told to run, in a
key, or in a path (a fusion's captures). So a name is accepted only if the bot knows it: the
fusion from the catalog of the suite at the bot's own commit (benchmarks/fusions/catalog.py;
tests/results/test_names.py holds the two lists equal), the variant and the dtype from the
suite's own lists, a shape and a machine (which no catalog can know) by a strict pattern.
Anything else is a :class:`~bot.results.types.BadInput` that names the file, never a name
passed on to be escaped later: an accepted name holds no character that markdown, HTML, a
reference, a mention, a shell or a path would read (docs/DATA.md, "Names").
"""

from __future__ import annotations

import re

from bot.results.types import BadInput

#: The suite's catalog, in its order (benchmarks/fusions/catalog.py FUSIONS).
FUSIONS = (
    "rmsnorm_bwd",
    "rmsnorm_fwd",
    "layernorm_fwd",
    "layernorm_bwd",
    "dropout_rmsnorm_fwd",
    "dropout_rmsnorm_bwd",
    "dropout_layernorm_fwd",
    "dropout_layernorm_bwd",
    "softmax_fwd",
    "softmax_bwd",
    "gelu_fwd",
    "gelu_bwd",
    "silu_mul_fwd",
    "silu_mul_bwd",
)
#: The hand-written fusion and the suite's contenders (benchmarks/engine/config.py).
VARIANTS = ("nvfuser", "thunder-prims", "thunder-func", "eager", "torch-compile")
#: The dtypes the suite measures (benchmarks/engine/config.py DTYPES).
DTYPES = ("bfloat16", "float16", "float32")
#: A shape: 1 to 4 positive extents joined by "x" (``2048x8192``).
SHAPE = re.compile(r"[1-9][0-9]{0,8}(?:x[1-9][0-9]{0,8}){0,3}")
#: An asv machine name (a folder of the results, the machine of a record): a runner label.
MACHINE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def _refuse(where: str, what: str, name: object, known: str) -> BadInput:
    text = name if isinstance(name, str) else f"<{type(name).__name__}>"
    shown = ascii(text[:60]) + ("..." if len(text) > 60 else "")
    return BadInput(f"{where}: {what} {shown} is not {known}")


def fusion(name: object, where: str) -> str:
    """`name` if it is a fusion of the catalog, else BadInput naming `where`."""
    if isinstance(name, str) and name in FUSIONS:
        return name
    raise _refuse(where, "fusion", name, "a fusion of the catalog (bot/results/names.py)")


def variant(name: object, where: str) -> str:
    if isinstance(name, str) and name in VARIANTS:
        return name
    raise _refuse(where, "variant", name, f"one of {', '.join(VARIANTS)}")


def dtype(name: object, where: str) -> str:
    if isinstance(name, str) and name in DTYPES:
        return name
    raise _refuse(where, "dtype", name, f"one of {', '.join(DTYPES)}")


def shape(name: object, where: str) -> str:
    if isinstance(name, str) and SHAPE.fullmatch(name):
        return name
    raise _refuse(where, "shape", name, "a shape such as 2048x8192")


def machine(name: object, where: str) -> str:
    if isinstance(name, str) and MACHINE.fullmatch(name):
        return name
    raise _refuse(where, "machine", name, "a plain runner label ([A-Za-z0-9._-], 1-100)")
