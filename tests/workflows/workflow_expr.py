"""A small evaluator for GitHub's expression language: the subset that job `if:` gates use.

The self-hosted-runner rule (workflow_rules.check_self_hosted_gated) has to prove that no event a
fork author can cause alone starts the GPU job. Reading a gate by eye or by regex misses the
places where GitHub's semantics surprise: strings compare ignoring case, `&&`/`||` return an
operand rather than a bool, `labels.*.name` maps over a list, and an `if:` with any text around
its `${{ }}` is a non-empty string, so always true. So the gate is evaluated against concrete
events instead. Anything outside the subset raises ExpressionError rather than guessing, so an
unsupported gate fails the check instead of passing it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any


class ExpressionError(ValueError):
    """The expression is outside what this evaluator can prove anything about."""


# String and number literals, the operators gates use, and dotted context names (with `.*`).
# Anything else, such as `<` or `[0]`, fails to tokenize: an error, never a silent guess.
TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||[!(),])"
    r"|(?P<name>[A-Za-z_][\w-]*(?:\.(?:[A-Za-z_][\w-]*|\*))*))"
)
# GitHub's string functions compare ignoring case, like its `==`; a function not listed here
# (fromJSON, hashFiles) makes evaluate_if raise rather than evaluate it wrongly.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "contains": lambda hay, needle: (
        any(equal(item, needle) for item in hay)
        if isinstance(hay, list)
        else str(needle).casefold() in str(hay).casefold()
    ),
    "startsWith": lambda text, prefix: str(text).casefold().startswith(str(prefix).casefold()),
    "endsWith": lambda text, suffix: str(text).casefold().endswith(str(suffix).casefold()),
    "format": lambda template, *values: _format(str(template), values),
    # Job-status functions, for a job whose needs all succeeded.
    "success": lambda: True,
    "always": lambda: True,
    "failure": lambda: False,
    "cancelled": lambda: False,
}


def _text(value: Any) -> str:
    """How GitHub turns a value into text: null is '', booleans are lower case."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _format(template: str, values: tuple[Any, ...]) -> str:
    """GitHub's format(): {N} is the N-th value, {{ and }} are braces."""

    def one(match: re.Match[str]) -> str:
        if match[0] in ("{{", "}}"):
            return match[0][0]
        index = int(match[1])
        if index >= len(values):
            raise ExpressionError(f"format(): no value for {{{index}}}")
        return _text(values[index])

    return re.sub(r"\{\{|\}\}|\{(\d+)\}", one, template)


def evaluate_if(condition: str, context: dict[str, Any]) -> Any:
    """An if: is one bare expression or exactly one ${{ }}; any other text (a space, the newline
    of a `|` block) makes GitHub read it as a non-empty string: always true."""
    wrapped = re.fullmatch(r"\$\{\{(.*)\}\}", condition, re.DOTALL)
    text = wrapped[1] if wrapped else condition
    if "${{" in text or "}}" in text:
        raise ExpressionError("text around ${{ }}: such an if: is always true")
    tokens = _tokenize(text)
    value, rest = _parse_or(tokens, context)
    if rest:
        raise ExpressionError(f"unexpected {rest[0][1]!r}")
    return value


Tokens = list[tuple[str, str]]


def _tokenize(text: str) -> Tokens:
    """(kind, text) pairs; kind is the TOKEN group that matched: str, num, op or name."""
    tokens, pos = [], 0
    while text[pos:].strip():
        match = TOKEN.match(text, pos)
        if not match:
            raise ExpressionError(f"cannot read {text[pos:].strip()[:20]!r} (functions?)")
        kind = match.lastgroup or ""
        tokens.append((kind, match[kind]))
        pos = match.end()
    return tokens


# A recursive-descent parser, one function per precedence level (|| binds loosest, then &&,
# then == and !=, then ! and parentheses). Each evaluates as it parses and returns its value
# with the tokens it did not consume; no syntax tree is kept, since a gate is evaluated once
# per scenario and the expressions are a line long.


def _parse_or(tokens: Tokens, ctx: dict[str, Any]) -> tuple[Any, Tokens]:
    """`a || b` gives an operand, not a bool, as GitHub's does: `x || 'fallback'` is a string."""
    value, tokens = _parse_and(tokens, ctx)
    while tokens and tokens[0] == ("op", "||"):
        right, tokens = _parse_and(tokens[1:], ctx)
        value = value if truthy(value) else right
    return value, tokens


def _parse_and(tokens: Tokens, ctx: dict[str, Any]) -> tuple[Any, Tokens]:
    """`a && b` gives the first falsy operand, or the last one: `x && null` is null."""
    value, tokens = _parse_eq(tokens, ctx)
    while tokens and tokens[0] == ("op", "&&"):
        right, tokens = _parse_eq(tokens[1:], ctx)
        value = right if truthy(value) else value
    return value, tokens


def _parse_eq(tokens: Tokens, ctx: dict[str, Any]) -> tuple[Any, Tokens]:
    value, tokens = _parse_unary(tokens, ctx)
    while tokens and tokens[0] in (("op", "=="), ("op", "!=")):
        op = tokens[0][1]
        right, tokens = _parse_unary(tokens[1:], ctx)
        value = equal(value, right) == (op == "==")
    return value, tokens


def _parse_unary(tokens: Tokens, ctx: dict[str, Any]) -> tuple[Any, Tokens]:
    if not tokens:
        raise ExpressionError("expression ends too early")
    (kind, text), rest = tokens[0], tokens[1:]
    if (kind, text) == ("op", "!"):
        value, rest = _parse_unary(rest, ctx)
        return not truthy(value), rest
    if (kind, text) == ("op", "("):
        value, rest = _parse_or(rest, ctx)
        if not rest or rest[0] != ("op", ")"):
            raise ExpressionError("unbalanced (")
        return value, rest[1:]
    if kind == "str":
        return text[1:-1].replace("''", "'"), rest
    if kind == "num":
        return float(text), rest
    if kind == "name":
        if rest and rest[0] == ("op", "("):
            return _call(text, rest[1:], ctx)
        keywords = {"true": True, "false": False, "null": None}
        return (keywords[text] if text in keywords else lookup(ctx, text)), rest
    raise ExpressionError(f"unexpected {text!r}")


def _call(name: str, tokens: Tokens, ctx: dict[str, Any]) -> tuple[Any, Tokens]:
    """A wrong argument count is an ExpressionError too, so a typo in a gate is reported. A
    context may bring its own job-status functions (`__functions__`: a step's success() is
    false once an earlier step failed)."""
    table = {**FUNCTIONS, **ctx.get("__functions__", {})}
    if name not in table:
        raise ExpressionError(f"function {name}() is not supported")
    args: list[Any] = []
    while tokens and tokens[0] != ("op", ")"):
        if args:
            if tokens[0] != ("op", ","):
                raise ExpressionError(f"{name}(): want ','")
            tokens = tokens[1:]
        value, tokens = _parse_or(tokens, ctx)
        args.append(value)
    if not tokens:
        raise ExpressionError(f"{name}(: unbalanced (")
    try:
        return table[name](*args), tokens[1:]
    except TypeError as err:
        raise ExpressionError(f"{name}(): {err}") from err


def lookup(ctx: dict[str, Any], dotted: str) -> Any:
    """`a.*.b` maps over a list, as GitHub's object filter does; a missing key is null, as on
    GitHub, so a gate that reads a field an event lacks is evaluated, not rejected."""
    node: Any = ctx
    for part in dotted.split("."):
        if part == "*":
            node = node if isinstance(node, list) else []
        elif isinstance(node, list):
            node = [item.get(part) for item in node if isinstance(item, dict)]
        else:
            node = node.get(part) if isinstance(node, dict) else None
    return node


def truthy(value: Any) -> bool:
    """GitHub's falsy values: null, false, 0, '' and NaN. An empty list or object is true."""
    return not (value in (None, False, 0, "") or (isinstance(value, float) and math.isnan(value)))


def equal(left: Any, right: Any) -> bool:
    """GitHub compares strings ignoring case, and coerces mixed types to numbers."""
    if isinstance(left, str) and isinstance(right, str):
        return left.casefold() == right.casefold()
    if type(left) is type(right):
        return bool(left == right)
    return _number(left) == _number(right)


def _number(value: Any) -> float:
    """The number a mixed-type comparison sees: null and false are 0, true is 1, and text
    that is no number is NaN, which equals nothing (so `'abc' == 0` is false)."""
    if value is None or isinstance(value, bool):
        return float(bool(value))
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value) if isinstance(value, str) else math.nan
    except ValueError:
        return math.nan
