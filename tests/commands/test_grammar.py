"""The command line's grammar and help pages, held to the one table they are built from.

Exit codes are listed once on the top-level page; each command's page lists the codes that
command can return (bot/commands/usage.py) and one example whose options the command has. And
the grammar's modules import their shared pieces from bot/commands/args.py, never the top-level
grammar that calls them: no import circle.
"""

from __future__ import annotations

import argparse
import ast
import re
import shlex
from pathlib import Path

import pytest
from paths import REPO_ROOT

from bot.commands import cli
from bot.commands.parser import build_parser
from bot.commands.usage import ANY, USAGES
from bot.exitcodes import ExitCode

COMMANDS = REPO_ROOT / "bot" / "commands"
_CODE_LINE = re.compile(r"^ +([0-9]+)  ([A-Z_]+) ", re.MULTILINE)


def _sub(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


def _pages() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser by its name, and the actions of site and store as ``site build``,
    ``store add`` ..."""
    top = _sub(build_parser(cli.HANDLERS))
    pages = dict(top)
    for command in ("site", "store"):
        pages.update({f"{command} {name}": p for name, p in _sub(top[command]).items()})
    return pages


def _help(*argv: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert cli.main([*argv, "--help"]) == 0
    return capsys.readouterr().out


def test_the_top_level_help_lists_every_exit_code_once(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys=capsys)
    listed = [(int(code), name) for code, name in _CODE_LINE.findall(text)]
    assert listed == [(c.value, c.name) for c in ExitCode]
    for command in _sub(build_parser(cli.HANDLERS)):
        assert f"    {command} " in text or f"    {command}\n" in text


@pytest.mark.parametrize("page", sorted(_pages()))
def test_each_help_page_lists_its_own_codes_and_an_example(
    page: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _help(*page.split(), capsys=capsys)
    usage = USAGES[page]
    listed = [ExitCode(int(code)) for code, _ in _CODE_LINE.findall(text)]
    assert listed == list(usage.all_codes())
    assert set(ANY) <= set(listed) and len(listed) < len(ExitCode)
    example = usage.example
    assert f"example:\n  {example}\n" in text
    assert example.startswith(f"python -m bot {page.split()[0]} ")


@pytest.mark.parametrize("page", sorted(USAGES))
def test_each_example_uses_options_its_command_has(page: str) -> None:
    words = shlex.split(USAGES[page].example.replace("\\\n", " "))
    assert words[:3] == ["python", "-m", "bot"]
    parser = _pages()[words[3]]
    actions = _sub(parser)
    if actions:  # store add ..., site build ...: the options are the action's
        parser = actions[words[4]]
    options = {s for a in parser._actions for s in a.option_strings}
    used = {w.split("=")[0] for w in words if w.startswith("--")}
    assert used and used <= options, used - options


def test_every_command_has_its_entry_in_the_table() -> None:
    assert set(_pages()) == set(USAGES)


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


@pytest.mark.parametrize(
    "path",
    [*sorted(COMMANDS.glob("*_parser.py")), COMMANDS / "args.py", COMMANDS / "usage.py"],
    ids=lambda p: p.name,
)
def test_no_sub_grammar_imports_the_top_level_grammar(path: Path) -> None:
    """Before: parser.py imported its four sub-parser modules and each imported parser.py."""
    assert "bot.commands.parser" not in _imports(path)


def test_the_import_check_sees_every_form(tmp_path: Path) -> None:
    for line in ("import bot.commands.parser", "from bot.commands import parser"):
        probe = tmp_path / "probe.py"
        probe.write_text(line + "\n", encoding="utf-8")
        assert "bot.commands.parser" in _imports(probe)
