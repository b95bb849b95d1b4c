"""How every command reads its arguments: numbers with a range (argparse types), and a
parser whose usage errors are one line naming the fix, exit 2. A value out of range is
refused while the arguments are parsed, never as a pydantic traceback from deep inside a
command after work has started; and a long usage block (`mine` has forty options) does
not bury the one line that matters."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn


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


def int_at_least(low: int) -> Callable[[str], int]:
    """A whole number >= `low` (`--reruns 0` is fine, `--limit 0` is not)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low} (got {value})")
        return value

    parse.__name__ = f"int >= {low}"
    return parse


def float_at_least(low: float) -> Callable[[str], float]:
    """A number >= `low` (tolerances, timeouts)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value >= low:  # also refuses nan
            raise argparse.ArgumentTypeError(f"must be at least {low:g} (got {text})")
        return value

    parse.__name__ = f"float >= {low:g}"
    return parse


NON_NEGATIVE = int_at_least(0)
POSITIVE = int_at_least(1)
