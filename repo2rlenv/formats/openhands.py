"""OpenHands event histories: the `history` of an evaluation `output.jsonl` row
(`{instance_id, instance, instruction, history, test_result: {git_patch}}`), or a bare
list of events.

Each event is an action (`{id, source, action, args}`) or an observation
(`{id, cause, observation, content, extras}`) whose `cause` is the id of the action it
answers. Early versions stored `history` as `[action, observation]` pairs; both are read.
Actions map onto the same tools as OpenHands' function-calling rows: `run` is
`execute_bash` (exit code in `extras.metadata.exit_code`, or `extras.exit_code` before),
`edit` with an editor sub-command and `read` are `str_replace_editor`, `write` writes.
An `edit` without a sub-command is the LLM-drafted edit: its effect is unknown.
`run_ipython` runs Python code (agentskills' `edit_file_by_replace(...)` among others),
which can change any file: it becomes a `python3 -c` command, which replay treats as
opaque. `think` and `finish` change nothing: their thoughts are agent text, not calls.

The resolver's `output.jsonl` of 2024 flattens each action's arguments
into the event (`{"action": "run", "command": ...}`) and its observations carry no
`cause`: an observation without one answers the latest call still unanswered.
"""

from __future__ import annotations

import shlex
from typing import Any

from repo2rlenv.formats.base import ParsedSession
from repo2rlenv.formats.builder import SessionBuilder
from repo2rlenv.formats.calls import Call
from repo2rlenv.formats.reasons import fail
from repo2rlenv.formats.swe_common import is_cut, swe_extra
from repo2rlenv.formats.text import as_dict, as_int, as_str, text_of

_EDITOR = frozenset({"view", "create", "str_replace", "insert", "undo_edit"})
_EDITOR_ARGS = ("command", "path", "file_text", "old_str", "new_str", "insert_line", "view_range")
_TEXT_ONLY = frozenset({"think", "finish"})
"""Actions that change nothing: what they say is agent text."""
_SILENT = frozenset({"agent_state_changed", "null", "recall", "think"})
"""Observations that answer nothing a reader needs (state changes, 'thought logged')."""
_EVENT_KEYS = frozenset({"id", "source", "timestamp", "action", "message", "observation"})
_ACTIONS = frozenset(
    {"run", "run_ipython", "read", "write", "edit", "message", "think", "finish", "browse"}
    | {"browse_interactive", "delegate", "recall", "system", "change_agent_state", "reject"}
)
"""OpenHands' action names: a flattened event is recognised by one of them, so another
format's `{"action": "..."}` lines are not taken for an OpenHands history."""


def _events(history: list[Any]) -> list[dict[str, Any]]:
    flat: list[dict[str, Any]] = []
    for item in history:
        if isinstance(item, list):
            flat.extend(i for i in item if isinstance(i, dict))
        elif isinstance(item, dict):
            flat.append(item)
    return flat


def _is_event(item: Any) -> bool:
    return isinstance(item, dict) and (
        ("action" in item and isinstance(item.get("args"), dict))
        or ("observation" in item and "content" in item)
        # flattened (resolver, 2024): one of OpenHands' action names, its arguments beside
        # it; a SWE-agent step also has a string `action`, but always with its `observation`
        or (_name(item.get("action")) in _ACTIONS and "observation" not in item)
    )


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _args(event: dict[str, Any]) -> dict[str, Any]:
    """The action's arguments: `args`, or the event's own fields where they are
    flattened into it."""
    args = event.get("args")
    if isinstance(args, dict):
        return args
    return {k: v for k, v in event.items() if k not in _EVENT_KEYS}


def is_openhands(record: Any) -> bool:
    """A `history` (or a bare list) of OpenHands action/observation events."""
    items = record.get("history") if isinstance(record, dict) else record
    if not isinstance(items, list):
        return False
    events = _events(items[:8])
    return (
        bool(events) and any(_is_event(e) for e in events) and not any("role" in e for e in events)
    )


def read_openhands(record: dict[str, Any] | list[Any], record_id: str) -> ParsedSession:
    row = record if isinstance(record, dict) else {}
    history = row.get("history") if row else record
    if not isinstance(history, list):
        raise fail("format.bad-type", "openhands: history is not a list")
    builder = SessionBuilder("openhands", profile="openhands-events")
    cwd: str | None = None
    asked = False
    instruction = as_str(row.get("instruction"))
    for event in _events(history):
        if "observation" in event:
            shown = _observe(builder, event)
            cwd = cwd or shown  # the first directory the shell reported is the run's root
            continue
        kind, args = event.get("action"), _args(event)
        text = as_str(args.get("thought")) or ""
        if isinstance(kind, str) and kind in _TEXT_ONLY:
            final = as_str(args.get("final_thought"))
            builder.agent("\n\n".join(t for t in (text, final) if t))
            continue
        if kind == "message" or kind == "system":
            content = as_str(args.get("content")) or text_of(event.get("message"))
            if kind == "system":
                builder.system(content)
            elif event.get("source") == "user":
                builder.user(content, typed_request=not asked)
                asked = True
            else:
                builder.agent(content)
            continue
        if kind in (None, "null", "recall", "change_agent_state"):
            continue
        name, call_args = _tool(kind, args)
        step_id = builder.agent(text)
        builder.call(str(event.get("id", "")) or None, name, call_args, step_id=step_id)
    if instruction and not asked:
        builder.user(instruction)
    patch = as_dict(row.get("test_result")).get("git_patch")
    return builder.finish(
        record_id=record_id,
        source_format="openhands-events",
        agent={
            "name": "openhands",
            "version": "unknown",
            "model_name": as_str(_llm_config(row).get("model")),
        },
        session_id=swe_extra(record_id, row).get("swe", {}).get("instance_id"),
        cwd=cwd,
        extra=swe_extra(
            record_id,
            row,
            instance=row.get("instance"),
            exit_status=as_str(row.get("error")) or None,
            submission=patch,
        ),
    )


def _llm_config(row: dict[str, Any]) -> dict[str, Any]:
    return as_dict(as_dict(row.get("metadata")).get("llm_config"))


def _tool(kind: Any, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool name and arguments the OpenHands profile maps."""
    if kind == "run":
        return "execute_bash", {"command": args.get("command")}
    if kind == "run_ipython" and isinstance(args.get("code"), str):
        return "execute_bash", {"command": f"python3 -c {shlex.quote(args['code'])}"}
    if kind == "edit" and args.get("command") in _EDITOR:
        return "str_replace_editor", {k: args[k] for k in _EDITOR_ARGS if args.get(k) is not None}
    if kind == "read":
        window = args.get("view_range")
        start, end = as_int(args.get("start")), as_int(args.get("end"))
        if window is None and (start not in (None, 0, 1) or end not in (None, -1)):
            window = [start, end]
        view = {"command": "view", "path": args.get("path")}
        return "str_replace_editor", {**view, **({"view_range": window} if window else {})}
    if kind == "write":
        return "write", {"path": args.get("path"), "content": args.get("content")}
    if kind == "edit":
        return "llm_edit", {"path": args.get("path")}
    return str(kind), {}


def _observe(builder: SessionBuilder, event: dict[str, Any]) -> str | None:
    """Attach an observation to the action it answers; the shell's directory, if any."""
    if as_str(event.get("observation")) in _SILENT:
        return None
    extras = as_dict(event.get("extras")) if "extras" in event else event  # flattened
    metadata = as_dict(extras.get("metadata"))
    content = text_of(event.get("content"))
    cause = event.get("cause")
    call: Call | None
    if cause is None:  # the resolver (2024): the latest call still unanswered
        call = next((c for c in reversed(builder.calls()) if c.result is None), None)
    else:
        call = builder.find(str(cause))
    if call is None:
        builder.system(content)
        return None
    code = as_int(metadata.get("exit_code"))
    code = code if code is not None else as_int(extras.get("exit_code"))
    if code == -1:
        code = None  # OpenHands' "no exit code": the command timed out or still runs
    failed = event.get("observation") == "error" or content.lstrip().startswith("ERROR:")
    if is_cut(content):
        call.context["output_cut"] = True
    builder.result(call.call_id, content, content=content, is_error=failed, exit_code=code)
    return as_str(metadata.get("working_dir"))
