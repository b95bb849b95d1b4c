"""Tool profiles: for each harness, which tool names write, edit, patch, read or run.
The one place a new harness's tools are taught.

A profile maps a tool name to a mapper (`formats.mappers`). Names a profile does not
list fall back to `GENERIC` (common names, lower-cased), then to `OtherTool`.
"""

from __future__ import annotations

from repo2rlenv.formats import readview
from repo2rlenv.formats.base import Action
from repo2rlenv.formats.calls import Call
from repo2rlenv.formats.mappers import (
    Mapper,
    apply_patch,
    codex_apply_patch,
    codex_command,
    command,
    edit,
    editor,
    hermes_patch,
    keystrokes,
    notebook,
    opencode_read,
    other,
    read_with,
    swe_agent_aci,
    write,
)
from repo2rlenv.formats.swe_tools import OPENHANDS_EVENTS, SWE_AGENT_TRAJ

PROFILES: dict[str, dict[str, Mapper]] = {
    "pi": {"read": read_with(readview.pi_read), "write": write, "edit": edit, "bash": command},
    "claude-code": {
        "Read": read_with(readview.claude_read),
        "Write": write,
        "Edit": edit,
        "MultiEdit": edit,
        "Bash": command,
        "NotebookEdit": notebook,
    },
    "codex": {
        "exec_command": codex_command,
        "shell_command": codex_command,
        "shell": codex_command,
        "local_shell": codex_command,
        "container.exec": codex_command,
        "apply_patch": codex_apply_patch,
    },
    "opencode": {
        "read": opencode_read,
        "write": write,
        "edit": edit,
        "multiedit": edit,
        "patch": apply_patch,
        "apply_patch": apply_patch,
        "bash": command,
    },
    "hermes": {
        "read_file": read_with(readview.hermes_read),
        "write_file": write,
        "patch": hermes_patch,
        "terminal": command,
    },
    "openhands": {"execute_bash": command, "str_replace_editor": editor},
    "swe-agent": {
        "bash": command,
        "str_replace_editor": editor,
        "create": swe_agent_aci,
        "edit": swe_agent_aci,
    },
    "terminus-2": {"bash_command": keystrokes},
    "swe-agent-traj": SWE_AGENT_TRAJ,
    "openhands-events": OPENHANDS_EVENTS,
}

GENERIC: dict[str, Mapper] = {
    "bash": command,
    "shell": command,
    "terminal": command,
    "execute_bash": command,
    "exec_command": codex_command,
    "shell_command": command,
    "run_command": command,
    "run_shell_command": command,
    "bash_command": keystrokes,
    "write": write,
    "write_file": write,
    "create_file": write,
    "edit": edit,
    "edit_file": edit,
    "multiedit": edit,
    "str_replace_editor": editor,
    "apply_patch": apply_patch,
    "read": read_with(readview.nothing),
    "read_file": read_with(readview.nothing),
}


def to_action(profile: str, call: Call) -> Action:
    mapper = PROFILES.get(profile, {}).get(call.name) or GENERIC.get(call.name.lower())
    return mapper(call) if mapper is not None else other(call)
