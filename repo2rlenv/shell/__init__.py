"""The shell analyser of the task core: one reader of command text for replay and the
guard.

`parse` is the door to atif-scan's static shell reader (words, redirections, pipelines,
`&&`/`;`, subshells, `$(...)`, `sh -c`, heredocs); `vocabulary` holds the one list of
commands that write nothing, touch nothing, delete, or run code; `effects` says which
files a command writes, deletes, moves or copies; `deobfuscate` computes the literal
layers (`printf` escapes, base64, hex, `rev`) without executing anything. Replay
(`repo2rlenv.replay`) and the guard (`train.guard.shell`) both build on these modules.
"""

from repo2rlenv.shell.effects import (
    CommandEffects,
    FileEffect,
    argument_effects,
    command_effects,
    redirect_writes,
)
from repo2rlenv.shell.vocabulary import READ_ONLY, is_check

__all__ = [
    "READ_ONLY",
    "CommandEffects",
    "FileEffect",
    "argument_effects",
    "command_effects",
    "is_check",
    "redirect_writes",
]
