"""SWE-agent `.traj` tools as actions: the ACI commands of the text format (`create F`,
`edit N:M`, `open F`...) and their function-calling twins (`create {filename}`,
`edit {search, replace}`, `insert {text}`, `str_replace_editor {command, path...}`).

SWE-agent's editors act on the *open file* (the one the last `open`/`create` showed),
so the reader passes it in `call.context["open_file"]`. Line-range edits and inserts
rewrite lines nobody saw whole: they mark the file unknown rather than guess.
"""

from __future__ import annotations

import shlex

from repo2rlenv.formats.base import Action, EditFile, EditSpan, WriteFile
from repo2rlenv.formats.calls import Call
from repo2rlenv.formats.mappers import Mapper, _base, command, editor, other, write
from repo2rlenv.formats.text import as_str, first_str


def _words(call: Call, *, whole: bool = False) -> list[str]:
    text = as_str(call.args.get("command")) or ""
    text = text if whole else text.split("\n", 1)[0]
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def create(call: Call) -> Action:
    """`create F` makes an empty file (and opens it); it fails when F exists."""
    path = first_str(call.args, "filename", "path", "file_name")
    if path is None:
        words = _words(call)
        path = words[1] if len(words) == 2 else None
    if path is None:
        return other(call)
    return WriteFile(**_base(call), path=path, content="")


def edit(call: Call) -> Action:
    """Function-calling `edit {search, replace}` replaces text in the open file; the text
    format's `edit N:M ... end_of_edit` rewrites a line range of it."""
    open_file = as_str(call.context.get("open_file"))
    search, replace = as_str(call.args.get("search")), as_str(call.args.get("replace"))
    if open_file and search is not None and replace is not None and search:
        every = call.args.get("replace_all") is True
        span = EditSpan(old=search, new=replace, replace_all=every)
        return EditFile(**_base(call), path=open_file, edits=(span,))
    return other(call, modifies=open_file)


def insert(call: Call) -> Action:
    return other(call, modifies=as_str(call.context.get("open_file")))


def text_editor(call: Call) -> Action:
    """`str_replace_editor view|create|str_replace|insert|undo_edit PATH --flag value`
    written as a text action: parsed into the function-calling arguments."""
    if isinstance(call.args.get("path"), str):
        return editor(call)
    words = _words(call, whole=True)
    if len(words) < 3:
        return other(call)
    args: dict[str, object] = {"command": words[1], "path": words[2]}
    flags = iter(words[3:])
    for flag in flags:
        if flag.startswith("--"):
            args[flag[2:]] = next(flags, "")
    return editor(Call(call.step_id, call.call_id, call.name, args, call.result, call.context))


SWE_AGENT_TRAJ: dict[str, Mapper] = {
    "bash": command,
    "create": create,
    "edit": edit,
    "insert": insert,
    "str_replace_editor": text_editor,
}
"""Tool profile of SWE-agent `.traj` runs; navigation (`open`, `goto`, `scroll_*`,
`search_*`, `find_file`) and `submit` change nothing and fall through to OtherTool."""


def llm_edit(call: Call) -> Action:
    """OpenHands' LLM-drafted edit: the file changed, in a way no record shows."""
    return other(call, modifies=first_str(call.args, "path"))


OPENHANDS_EVENTS: dict[str, Mapper] = {
    "execute_bash": command,
    "str_replace_editor": editor,
    "write": write,
    "llm_edit": llm_edit,
}
"""Tool profile of OpenHands event histories (`formats.openhands` names the tools)."""
