"""Options are declared once: every flag of every command is generated from a field of
the command's pydantic options model, its default and help are the model's, and no
command module writes a parser by hand. A default typed twice (argparse and pydantic)
drifts; a help text beside the field it describes does not."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest
from pydantic import BaseModel

from repo2rlenv.cli import build_parser
from repo2rlenv.cli_args import cli_fields, flags_of, help_of
from repo2rlenv.commands import COMMANDS, options_model
from train import cli as train_cli
from train.evaluate import cli as eval_cli

ROOT = Path(__file__).resolve().parents[1]
GENERATED = [  # the modules whose parsers must come from a model
    *sorted((ROOT / "repo2rlenv" / "commands").glob("*.py")),
    ROOT / "smoldataenvs" / "options.py",
    ROOT / "smoldataenvs" / "source.py",
    ROOT / "train" / "evaluate" / "cli.py",
    ROOT / "train" / "cli.py",
]
TOUCHED = [
    *GENERATED,
    ROOT / "repo2rlenv" / "cli.py",
    ROOT / "repo2rlenv" / "cli_args.py",
    ROOT / "repo2rlenv" / "cli_options.py",
    ROOT / "repo2rlenv" / "cli_paths.py",
]


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(commands.choices)


def _cases() -> list[tuple[str, argparse.ArgumentParser, type[BaseModel]]]:
    subs = _subparsers()
    found = [(f"repo2rlenv {n}", subs[n], options_model(m)) for n, m in COMMANDS.items()]
    found.append(("python -m train", train_cli.build_parser(), train_cli.TrainArgs))
    found.append(("python -m train eval", eval_cli.build_parser(), eval_cli.EvalArgs))
    return found


CASES = _cases()


@pytest.mark.parametrize(("command", "parser", "model"), CASES, ids=[c[0] for c in CASES])
def test_every_flag_is_a_model_field_with_its_default_and_help(
    command: str, parser: argparse.ArgumentParser, model: type[BaseModel]
) -> None:
    fields = cli_fields(model)
    actions = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
    assert sorted(a.dest for a in actions) == sorted(fields), command
    for action in actions:
        field = fields[action.dest]
        given = action.option_strings or [action.dest]
        if isinstance(action, argparse.BooleanOptionalAction):  # --NAME adds --no-NAME
            given = given[:1]
        assert given == flags_of(action.dest, field)
        assert action.help == help_of(field) and field.description, action.dest
        expected = field.get_default(call_default_factory=True)
        if field.is_required():
            assert action.required or not action.option_strings, action.dest
        elif action.default is not argparse.SUPPRESS:  # --debug: the top parser's
            assert action.default == expected, (action.dest, action.default, expected)


def test_a_parsed_command_line_is_the_model_with_its_defaults() -> None:
    from repo2rlenv.cli_args import options_from

    args = build_parser().parse_args(["mine", "--dataset", "d", "--no-validate"])
    options = options_from(args, options_model(COMMANDS["mine"]))
    defaults = options_model(COMMANDS["mine"])(dataset="d", validate_tasks=False)
    assert options.model_dump(exclude={"out"}) == defaults.model_dump(exclude={"out"})


@pytest.mark.parametrize("path", GENERATED, ids=lambda p: p.name)
def test_no_command_module_writes_a_parser_by_hand(path: Path) -> None:
    calls = [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "add_argument"
    ]
    assert not calls, f"{path.name}: add_argument at lines {calls}; declare a model field"


def test_the_dispatcher_adds_only_version_by_hand() -> None:
    text = (ROOT / "repo2rlenv" / "cli.py").read_text()
    assert text.count("add_argument(") == 1 and 'add_argument("--version"' in text


@pytest.mark.parametrize("path", TOUCHED, ids=lambda p: p.name)
def test_modules_and_functions_stay_small(path: Path) -> None:
    text = path.read_text()
    assert len(text.splitlines()) <= 400, path.name
    long = [
        f"{node.name}: {node.end_lineno - node.lineno + 1}"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > 80
    ]
    assert not long, long
