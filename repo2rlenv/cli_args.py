"""How every command reads its arguments: the argparse parser is generated from the
command's pydantic options model, so a flag's name, default, range and help are declared
once, in the model, and the command receives the model, never an argparse Namespace.

Numbers carry their range into argparse types: a value out of range is refused while the
arguments are parsed (one line naming the flag, exit 2), never as a pydantic traceback
from deep inside a command after work has started; and a long usage block (`mine` has
forty options) does not bury the one line that matters.
"""

from __future__ import annotations

import argparse
import inspect
import types
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any, Literal, NoReturn, TypeVar, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo

CLI_KEY = "cli"
"""Where a field keeps its command-line spelling (`json_schema_extra`)."""
M = TypeVar("M", bound=BaseModel)


class OneLineParser(argparse.ArgumentParser):
    """`argparse.ArgumentParser` whose errors are one line: what is wrong and where the
    options are listed (`PROG --help`), exit 2. Subparsers inherit the class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")

    def parse_args(  # type: ignore[override]
        self, args: list[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """As argparse, but an unknown option is reported by the subcommand it was given
        to (`repo2rlenv mine: error: unrecognized arguments: --atol`), whose `--help`
        lists the options that exist, not by the top-level parser."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self._parser_of(parsed).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def _parser_of(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(parsed, action.dest, None) or "")
                if isinstance(chosen, OneLineParser):
                    return chosen._parser_of(parsed)
                if chosen is not None:
                    return chosen
        return self


def number_in(kind: type, low: float | None = None, high: float | None = None) -> Callable:
    """An argparse type: an int or float within [low, high] (either end open)."""
    word = "whole number" if kind is int else "number"

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {word}") from None
        if low is not None and high is not None and not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low:g} and {high:g} (got {text})")
        if low is not None and not value >= low:  # also refuses nan
            raise argparse.ArgumentTypeError(f"must be at least {low:g} (got {text})")
        if high is not None and not value <= high:
            raise argparse.ArgumentTypeError(f"must be at most {high:g} (got {text})")
        return value

    parse.__name__ = kind.__name__
    return parse


def int_at_least(low: int) -> Callable[[str], int]:
    """A whole number >= `low` (`--reruns 0` is fine, `--limit 0` is not)."""
    return number_in(int, low)


def float_at_least(low: float) -> Callable[[str], float]:
    """A number >= `low` (tolerances, timeouts)."""
    return number_in(float, low)


NON_NEGATIVE = int_at_least(0)
POSITIVE = int_at_least(1)


def option(
    default: Any = None,
    help: str = "",
    *,
    flags: tuple[str, ...] = (),
    metavar: str | None = None,
    positional: bool = False,
    inherited: bool = False,
    nargs: str | None = None,
    **constraints: Any,
) -> Any:
    """A command-line option, declared once: a pydantic `Field` whose description is the
    help and whose `json_schema_extra` holds the spelling (`flags`, default `--NAME`;
    `positional`; `inherited`: also on the parent parser, so a subcommand leaves it
    unset; `nargs="+"`: a list given after one flag rather than a repeated flag).
    `default=[]` means a fresh list each time."""
    cli = {"flags": list(flags), "metavar": metavar, "positional": positional}
    cli |= {"inherited": inherited, "nargs": nargs}
    extra = {CLI_KEY: cli}
    if isinstance(default, list):
        return Field(default_factory=list, description=help, json_schema_extra=extra, **constraints)
    return Field(default, description=help, json_schema_extra=extra, **constraints)


def cli_fields(model: type[BaseModel]) -> dict[str, FieldInfo]:
    """The fields of `model` that are command-line options: the model's own first, then
    those of its mixins in the order they are listed (pydantic lists the mixins' first)."""
    order = [name for cls in model.__mro__ for name in inspect.get_annotations(cls)]
    fields = model.model_fields
    return {
        name: fields[name]
        for name in dict.fromkeys(order)
        if name in fields
        and isinstance(fields[name].json_schema_extra, dict)
        and CLI_KEY in fields[name].json_schema_extra  # type: ignore[operator]
    }


def spec(field: FieldInfo) -> dict[str, Any]:
    return field.json_schema_extra[CLI_KEY]  # type: ignore[index,return-value]


def default_of(field: FieldInfo) -> Any:
    """The model's default (None for a required field)."""
    return None if field.is_required() else field.get_default(call_default_factory=True)


def flags_of(name: str, field: FieldInfo) -> list[str]:
    """`--no-NAME` for a bool that is on by default, `--NAME` otherwise, unless named."""
    if spec(field)["positional"]:
        return [name]
    if spec(field)["flags"]:
        return list(spec(field)["flags"])
    negated = _base(field.annotation) is bool and default_of(field) is True
    return [("--no-" if negated else "--") + name.replace("_", "-")]


def help_of(field: FieldInfo) -> str:
    """The description, with the default appended unless the text already says it."""
    text = field.description or ""
    default = default_of(field)
    shown = default is not None and not isinstance(default, bool) and default != []
    if shown and "default" not in text:
        value = _plain(default)
        shown_value = repr(value) if isinstance(value, str) else value
        text = f"{text} (default {shown_value})"
    return text


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def _base(annotation: Any) -> Any:
    """`X` of `X | None`, `list[X]` kept as is."""
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation


def _range(field: FieldInfo) -> tuple[float | None, float | None]:
    low = high = None
    for item in field.metadata:
        if isinstance(item, annotated_types.Ge):
            low = item.ge
        elif isinstance(item, annotated_types.Gt):
            low = item.gt + (1 if isinstance(item.gt, int) else 0)
        elif isinstance(item, annotated_types.Le):
            high = item.le
    return low, high  # type: ignore[return-value]


def _value_kwargs(kind: Any, field: FieldInfo) -> dict[str, Any]:
    """How argparse reads one value of type `kind`: a number in its range, a path, one
    of the choices (Literal or Enum), or the text as given."""
    if kind in (int, float):
        return {"type": number_in(kind, *_range(field)), "metavar": "N"}
    if kind is Path:
        return {"type": Path}
    if get_origin(kind) is Literal:
        return {"choices": get_args(kind)}
    if isinstance(kind, type) and issubclass(kind, Enum):
        return {"type": kind, "choices": list(kind)}
    return {}


def argument(name: str, field: FieldInfo, inherit: bool = True) -> tuple[list[str], dict[str, Any]]:
    """The `add_argument` call of one model field: its flags and keywords."""
    kind, default = _base(field.annotation), default_of(field)
    kwargs: dict[str, Any] = {"help": help_of(field), "default": default}
    if kind is bool and default is None:  # unset, --NAME or --no-NAME
        kwargs["action"] = argparse.BooleanOptionalAction
    elif kind is bool:
        kwargs["action"] = "store_false" if default is True else "store_true"
    elif get_origin(kind) is list:
        kwargs |= _value_kwargs(get_args(kind)[0], field)
        if spec(field)["positional"] or spec(field)["nargs"]:
            kwargs["nargs"] = spec(field)["nargs"] or "+"
        else:
            kwargs["action"] = "append"
    else:
        kwargs |= _value_kwargs(kind, field)
    if not spec(field)["positional"]:
        kwargs["dest"] = name
        kwargs["required"] = field.is_required()
    if spec(field)["metavar"]:
        kwargs["metavar"] = spec(field)["metavar"]
    if spec(field)["inherited"] and inherit:
        kwargs["default"] = argparse.SUPPRESS
    return flags_of(name, field), kwargs


def add_options(
    parser: argparse.ArgumentParser, model: type[BaseModel], *, inherit: bool = True
) -> None:
    """Every option of `model` on `parser`: the one place a parser is written.
    `inherit=False` on the top-level parser, which owns the inherited options."""
    for name, field in cli_fields(model).items():
        flags, kwargs = argument(name, field, inherit)
        parser.add_argument(*flags, **kwargs)


def options_from(source: argparse.Namespace | BaseModel, model: type[M], **given: Any) -> M:
    """The parsed arguments (or a command's options model) as `model`: every field of
    `model` that `source` has by the same name, then `given` (renamed or computed
    fields); the rest keep their default. One place passes options on by name, so a
    field added to both sides is carried without a new line in every command."""
    values = dict(source) if isinstance(source, BaseModel) else vars(source)
    return model.model_validate({k: values[k] for k in model.model_fields if k in values} | given)
