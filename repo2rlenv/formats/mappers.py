"""Mappers: what a tool call did to the workspace, as an action replay can apply.

Each mapper takes a `Call` (arguments plus the result the reader unwrapped) and returns
one action. Argument spellings differ between harnesses (`path`, `file_path`,
`filePath`; `oldText`, `old_string`, `oldString`...), so each mapper accepts all of
them; which tool name uses which mapper is decided in `formats.tools`. Paths are passed
through exactly as the session wrote them; nothing here touches the filesystem.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from repo2rlenv.formats import readview
from repo2rlenv.formats.base import (
    Action,
    ApplyPatch,
    EditFile,
    EditSpan,
    OtherTool,
    ReadFile,
    RunCommand,
    UnifiedDiff,
    WriteFile,
)
from repo2rlenv.formats.calls import Call
from repo2rlenv.formats.history import harness_cut
from repo2rlenv.formats.text import as_dict, as_str, first_str

Mapper = Callable[[Call], Action]

_PATH_KEYS = ("path", "file_path", "filePath", "file", "absolute_path", "notebook_path")
_BEGIN, _END = "*** Begin Patch", "*** End Patch"


def _base(call: Call) -> dict[str, Any]:
    return {"step_id": call.step_id, "call_id": call.call_id, "ok": call.ran_ok}


def other(call: Call, modifies: str | None = None) -> OtherTool:
    return OtherTool(**_base(call), name=call.name, modifies=modifies)


def write(call: Call) -> Action:
    path = first_str(call.args, *_PATH_KEYS)
    content = first_str(call.args, "content", "file_text", "contents", "text")
    if path is None or content is None:
        return other(call, modifies=path)
    return WriteFile(**_base(call), path=path, content=content)


def _span(item: dict[str, Any], new_default: str | None = None) -> EditSpan | None:
    old = first_str(item, "oldText", "old_string", "oldString", "old_str")
    new = first_str(item, "newText", "new_string", "newString", "new_str")
    new = new if new is not None else new_default
    if old is None or new is None:
        return None
    every = item.get("replace_all", item.get("replaceAll", False)) is True
    return EditSpan(old=old, new=new, replace_all=every)


def edit(call: Call, new_default: str | None = None) -> Action:
    """One replacement ({path, old, new}) or several ({path, edits: [...]}), in any of the
    spellings pi, Claude Code, opencode and Hermes use."""
    path = first_str(call.args, *_PATH_KEYS)
    items = call.args.get("edits")
    if isinstance(items, list):
        spans = [_span(as_dict(item), new_default) for item in items]
    else:
        spans = [_span(call.args, new_default)]
    if path is None or not spans or any(span is None for span in spans):
        return other(call, modifies=path)
    return EditFile(**_base(call), path=path, edits=tuple(s for s in spans if s is not None))


def _command_text(raw: Any) -> str | None:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list) and raw and all(isinstance(part, str) for part in raw):
        if len(raw) == 3 and raw[0] in ("bash", "sh", "zsh") and raw[1] in ("-lc", "-c"):
            return raw[2]
        return shlex.join(raw)
    return None


def command(call: Call) -> Action:
    raw = call.args.get("command", call.args.get("cmd"))
    text = _command_text(raw)
    if text is None:
        return other(call)
    cwd = first_str(call.args, "workdir", "cwd", "working_directory") or as_str(
        call.context.get("cwd")
    )
    result = call.result
    return RunCommand(
        **_base(call),
        command=text,
        cwd=cwd,
        output=result.text if result else None,
        exit_code=result.exit_code if result else None,
        output_complete=call.context.get("output_cut") is not True,
    )


def keystrokes(call: Call) -> Action:
    """terminus-2 types keystrokes into tmux; the trailing newline is the Enter key. The
    observation is the screen afterwards, and no exit code exists."""
    text = as_str(call.args.get("keystrokes"))
    if text is None:
        return other(call)
    result = call.result
    output = result.text if result else None
    return RunCommand(**_base(call), command=text.removesuffix("\n"), output=output)


def _envelope(text: str) -> str | None:
    start = text.find(_BEGIN)
    end = text.find(_END, start) if start >= 0 else -1
    if start < 0 or end < 0:
        return None
    stop = end + len(_END)
    return text[start:stop] + ("\n" if text[stop : stop + 1] == "\n" else "")


def _changes_diff(changes: Any) -> str | None:
    """A unified diff from Codex's patch_apply_end `changes` map, used when the patch
    text itself is not in the record."""
    if not isinstance(changes, dict) or not changes:
        return None
    parts: list[str] = []
    for path, change in changes.items():
        change = as_dict(change)
        kind, content = change.get("type"), as_str(change.get("content")) or ""
        lines = content.removesuffix("\n").split("\n") if content else []
        tail = "" if not content or content.endswith("\n") else "\\ No newline at end of file\n"
        if kind == "add":
            body = "".join(f"+{line}\n" for line in lines)
            parts.append(f"--- /dev/null\n+++ {path}\n@@ -0,0 +1,{len(lines)} @@\n{body}{tail}")
        elif kind == "delete":
            body = "".join(f"-{line}\n" for line in lines)
            parts.append(f"--- {path}\n+++ /dev/null\n@@ -1,{len(lines)} +0,0 @@\n{body}{tail}")
        elif kind == "update" and isinstance(change.get("unified_diff"), str):
            target = as_str(change.get("move_path")) or path
            parts.append(f"--- {path}\n+++ {target}\n{change['unified_diff']}")
        else:
            return None
    return "".join(parts)


def apply_patch(call: Call) -> Action:
    text = first_str(call.args, "input", "patch", "patchText", "patch_text") or ""
    base = _base(call)
    base["ok"] = base["ok"] and call.context.get("patch_success") is not False
    envelope = _envelope(text)
    if envelope is not None:
        return ApplyPatch(**base, patch=envelope)
    diff = _changes_diff(call.context.get("changes"))
    if diff is not None:
        return UnifiedDiff(**base, diff=diff)
    return other(call)


def codex_apply_patch(call: Call) -> Action:
    """Codex reports a patch's fate in patch_apply_end (`success`) or an exit code; an
    output without either ("aborted") is no evidence the patch landed."""
    action = apply_patch(call)
    result = call.result
    proven = call.context.get("patch_success") is True or (
        result is not None and result.exit_code == 0
    )
    return action if proven or not action.ok else action.model_copy(update={"ok": False})


def codex_command(call: Call) -> Action:
    """Codex also applies patches through the shell (`apply_patch <<'EOF' ...`); those
    are patches, not commands, for replay."""
    text = _command_text(call.args.get("command", call.args.get("cmd")))
    if text is not None and "apply_patch" in text and _envelope(text) is not None:
        return codex_apply_patch(
            Call(call.step_id, call.call_id, call.name, {"input": text}, call.result, call.context)
        )
    if call.context.get("changes") and text is not None and "apply_patch" in text:
        return codex_apply_patch(call)
    return command(call)


def read_with(cleaner: Callable[[Call], readview.Shown]) -> Mapper:
    def mapper(call: Call) -> Action:
        path = first_str(call.args, *_PATH_KEYS)
        if path is None:
            return other(call)
        content, complete = cleaner(call)
        whole = complete and content is not None and not harness_cut(content)
        return ReadFile(**_base(call), path=path, content=content, complete=whole)

    return mapper


def opencode_read(call: Call) -> Action:
    text = call.result.text if call.result else None
    if text is not None and "<type>directory</type>" in text:
        return other(call)
    return read_with(readview.opencode_read)(call)


def editor(call: Call) -> Action:
    """OpenHands / SWE-agent `str_replace_editor`: one tool, five sub-commands."""
    sub = call.args.get("command")
    path = first_str(call.args, *_PATH_KEYS)
    if sub == "create":
        return write(call)
    if sub == "str_replace":
        return edit(call, new_default="")
    if sub == "view":
        text = call.result.text if call.result else ""
        if text and "files and directories" in text:
            return other(call)
        return read_with(readview.openhands_read)(call)
    if sub in ("insert", "undo_edit"):
        return other(call, modifies=path)
    return other(call)


def hermes_patch(call: Call) -> Action:
    if call.args.get("mode", "replace") == "replace":
        return edit(call)
    diff = as_str(as_dict(call.result.data if call.result else None).get("diff"))
    if diff:
        return UnifiedDiff(**_base(call), diff=diff)
    return apply_patch(call)


def notebook(call: Call) -> Action:
    return other(call, modifies=first_str(call.args, *_PATH_KEYS))


def swe_agent_aci(call: Call) -> Action:
    """SWE-agent's file commands (nebius rows): `create F` makes an empty file; `edit N:M`
    rewrites lines of the open file, which only a line-aware replay could apply."""
    words = (as_str(call.args.get("command")) or "").split()
    if call.name == "create" and len(words) == 2:
        return WriteFile(**_base(call), path=words[1], content="")
    if call.name == "edit":
        return other(call, modifies=as_str(call.context.get("open_file")))
    return other(call)
