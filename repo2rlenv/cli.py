"""`repo2rlenv`: the dispatcher. Each subcommand lives in `repo2rlenv.commands.<name>`
with its options model; the parser is generated from the models, the chosen command
receives its model.

Exit codes: 0 success (all tasks valid), 1 some task invalid, 2 usage or set-up error
(bad arguments, no tasks found, no Docker engine, a source that cannot be read: the Hub
unreachable, an unknown dataset, revision or split, a folder with nothing readable; a
host tool missing or too old: pip without --uploaded-prior-to for --instances),
130 interrupted. Set-up errors are one line; `--debug` or REPO2RLENV_DEBUG=1 adds the
traceback (docs/failures.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

from repo2rlenv import __version__, ui
from repo2rlenv.cli_args import OneLineParser, add_options, options_from
from repo2rlenv.cli_options import DEBUG_ENV, DebugOption
from repo2rlenv.cli_paths import absolute_paths
from repo2rlenv.commands import COMMANDS, options_model
from repo2rlenv.commands.common import EXIT_INTERRUPTED, EXIT_SETUP

PROG = "repo2rlenv"


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="Turn published coding-agent sessions into verified Harbor tasks.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    add_options(parser, DebugOption, inherit=False)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module in COMMANDS.items():
        sub = commands.add_parser(name, help=module.HELP, description=module.DESCRIPTION)
        add_options(sub, options_model(module))
    return parser


def debugging(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "debug", False)) or os.environ.get(DEBUG_ENV, "") not in ("", "0")


def main(argv: list[str] | None = None) -> int:
    from repo2rlenv.hosttools import HostToolError
    from repo2rlenv.hub import SourceUnavailable

    args = absolute_paths(build_parser().parse_args(argv))
    command = COMMANDS[args.command]
    try:
        return command.run(options_from(args, options_model(command)))
    except (SourceUnavailable, HostToolError) as exc:
        if debugging(args):
            traceback.print_exc()
        ui.error(str(exc))
        return EXIT_SETUP
    except KeyboardInterrupt:
        ui.error("interrupted; containers were removed")
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
