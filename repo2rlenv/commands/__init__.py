"""The `repo2rlenv` subcommands, one module each. A command module holds NAME, HELP,
DESCRIPTION, its options model `Options` (the parser is generated from it) and
`run(options) -> exit code`; `options_model()` where the model depends on what is
installed (`mine` and its sources). COMMANDS is the one registry the dispatcher, the
reference generator and the tests read."""

from __future__ import annotations

from types import ModuleType

from pydantic import BaseModel

from repo2rlenv.commands import (
    clean,
    decontam,
    difficulty,
    examples,
    images,
    mine,
    pull,
    push,
    setup,
    validate,
)

COMMANDS: dict[str, ModuleType] = {
    module.NAME: module
    for module in (
        validate,
        mine,
        decontam,
        push,
        pull,
        setup,
        clean,
        images,
        examples,
        difficulty,
    )
}


def options_model(command: ModuleType) -> type[BaseModel]:
    """The options model a command parses into."""
    factory = getattr(command, "options_model", None)
    return factory() if factory is not None else command.Options
