"""Codex CLI rollouts (`~/.codex/sessions/.../rollout-*.jsonl`).

Every line is {timestamp, type, payload}. The model's view of the conversation is the
`response_item` stream; `event_msg` lines repeat parts of it for the UI, and carry two
facts found nowhere else: the user's own words (`user_message`, where response items
mix them with injected context) and what a patch changed (`patch_apply_end`). Legacy
rollouts have no payload wrapper; their items are read the same way.
"""

from __future__ import annotations

import re
from typing import Any

from repo2rlenv.formats.base import ParsedSession
from repo2rlenv.formats.builder import SessionBuilder
from repo2rlenv.formats.calls import Call
from repo2rlenv.formats.codemode import cell_output, command_result, nested_calls
from repo2rlenv.formats.codex_export import export_lines
from repo2rlenv.formats.framing import codex_output
from repo2rlenv.formats.records import split_bad
from repo2rlenv.formats.text import as_dict, as_int, as_list, as_str, parse_args, text_of

_RESPONSE_TYPES = (
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
)
_REFUSALS = ("aborted", "execution error", "exec command rejected", "sandbox error")
"""Codex's own words when a call never ran (or died): no header, no exit code."""
_CONTEXT = re.compile(r"\s*(?:<[a-z_]+>|<[A-Z_]+>|# AGENTS\.md)")


class _Walk:
    """Walk state: the open agent step and the directory the turn runs in."""

    def __init__(self, builder: SessionBuilder, user_events: bool) -> None:
        self.builder = builder
        self.user_events = user_events
        self.open = False
        self.cwd: str | None = None
        self.model: str | None = None
        self.cells: dict[str, list[Call]] = {}
        """Code-mode `exec` call id -> the tool calls its script made."""
        self.running: dict[str, list[Call]] = {}
        """Cell id of a yielded cell ("Script running with cell ID N") -> its calls, until
        a `wait` on that cell reports how it ended."""

    def agent_step(self, when: Any) -> int:
        current = self.builder.current_agent()
        if self.open and current is not None:
            return current
        self.open = True
        return self.builder.agent(model=self.model, timestamp=when)

    def close(self) -> None:
        self.open = False


def read_codex(lines: list[Any] | dict[str, Any], record_id: str) -> ParsedSession:
    if isinstance(lines, dict):  # a `{messages, meta}` export of one rollout
        lines = export_lines(lines)
    entries, bad = split_bad(lines)
    items = [_normalise(e) for e in entries]
    user_events = any(k == "event_msg" and p.get("type") == "user_message" for k, p, _ in items)
    builder = SessionBuilder("codex")
    builder.truncated = bool(bad)
    walk = _Walk(builder, user_events)
    meta: dict[str, Any] = {}
    for kind, payload, when in items:
        if kind == "session_meta":
            meta = meta or payload
            walk.cwd = as_str(payload.get("cwd")) or walk.cwd
        elif kind == "turn_context":
            walk.cwd = as_str(payload.get("cwd")) or walk.cwd
            walk.model = as_str(payload.get("model")) or walk.model
        elif kind == "compacted":
            builder.compact()
            builder.system(text_of(payload.get("message")), timestamp=when)
            walk.close()
        elif kind == "response_item":
            _response_item(walk, payload, when)
        elif kind == "event_msg":
            _event(walk, payload, when)
    for call in builder.calls():
        if call.result is not None and call.result.exit_code is None:
            call.result.exit_code = as_int(call.context.get("exit_code"))
    return builder.finish(
        record_id=record_id,
        source_format="codex",
        agent={
            "name": "codex",
            "version": as_str(meta.get("cli_version")),
            "model_name": walk.model,
            "extra": {"originator": meta["originator"]} if meta.get("originator") else None,
        },
        session_id=meta.get("id"),
        cwd=meta.get("cwd"),
        git=meta.get("git"),
    )


def _normalise(entry: dict[str, Any]) -> tuple[str, dict[str, Any], Any]:
    if "payload" in entry:
        return str(entry.get("type")), as_dict(entry.get("payload")), entry.get("timestamp")
    if entry.get("type") in _RESPONSE_TYPES:
        return "response_item", entry, None
    if "instructions" in entry or ("id" in entry and "timestamp" in entry):
        return "session_meta", entry, entry.get("timestamp")
    return "other", entry, None


def _response_item(walk: _Walk, item: dict[str, Any], when: Any) -> None:
    builder = walk.builder
    kind = item.get("type")
    if kind == "message":
        text = text_of(item.get("content"))
        role = item.get("role")
        if role == "assistant":
            builder.add_text(walk.agent_step(when), text)
            return
        walk.close()
        if role != "user" or _CONTEXT.match(text):
            builder.system(text, timestamp=when)
        elif not walk.user_events:
            builder.user(text, timestamp=when)
    elif kind == "reasoning":
        summary = text_of([as_dict(s).get("text") for s in as_list(item.get("summary"))])
        builder.add_text(
            walk.agent_step(when), summary or text_of(item.get("content")), reasoning=True
        )
    elif kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
        _call(walk, item, when)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        walk.close()
        raw = item.get("output")
        cell = walk.cells.get(item["call_id"]) if isinstance(item.get("call_id"), str) else None
        if cell is not None:
            _cell_result(walk, cell, raw, when)
            return
        text, exit_code = codex_output(raw)
        refused = exit_code is None and (text or "").lstrip().lower().startswith(_REFUSALS)
        call = builder.result(
            item.get("call_id"),
            text,
            content=raw if isinstance(raw, str) else text,
            exit_code=exit_code,
            is_error=refused,
            timestamp=when,
        )
        if call is not None and call.name == "wait":
            waited = walk.running.get(str(call.args.get("cell_id")))
            if waited and cell_output(raw).state != "running":
                _cell_result(walk, waited, raw, when, observed=False)


def _call(walk: _Walk, item: dict[str, Any], when: Any) -> None:
    kind = item.get("type")
    if kind == "function_call":
        name, args = item.get("name"), parse_args(item.get("arguments"))
    elif kind == "custom_tool_call":
        name, args = item.get("name"), {"input": item.get("input")}
        if name == "exec" and _code_mode(walk, item, when):
            return
    elif kind == "local_shell_call":
        action = as_dict(item.get("action"))
        name = "local_shell"
        args = {"command": action.get("command"), "workdir": action.get("working_directory")}
    else:
        name, args = "web_search", {"action": item.get("action")}
    call_id = item.get("call_id") or item.get("id")
    walk.builder.call(call_id, name, args, step_id=walk.agent_step(when), context={"cwd": walk.cwd})


def _code_mode(walk: _Walk, item: dict[str, Any], when: Any) -> bool:
    """Record the tool calls a code-mode cell's script made, each as its own call (the
    same action a plain Codex call would be); False when the input holds no `tools.*`
    call, so the cell stays one `exec` call."""
    calls = nested_calls(item.get("input"))
    if not calls:
        return False
    cell_id = item.get("call_id") or item.get("id")
    if not isinstance(cell_id, str) or not cell_id:
        return False
    step_id = walk.agent_step(when)
    walk.cells[cell_id] = [
        walk.builder.call(
            f"{cell_id}/{index}",
            nested.name,
            nested.args,
            step_id=step_id,
            context={"cwd": walk.cwd, "code_mode_cell": cell_id},
        )
        for index, nested in enumerate(calls)
    ]
    return True


def _cell_result(
    walk: _Walk, calls: list[Call], raw: Any, when: Any, *, observed: bool = True
) -> None:
    """A cell's output is whatever its script printed. With one nested call that is the
    call's own output (and exit code, when the script printed the whole result object);
    with several it cannot be split, so each gets the text but no exit code. A script
    that failed proves none of them ran; one that yielded ("running") is settled by the
    later `wait` on its cell, or never (then, too, nothing proves its calls ended)."""
    shown = cell_output(raw)
    if shown.state == "running" and shown.cell_id is not None:
        walk.running[shown.cell_id] = calls
    single = len(calls) == 1
    text, exit_code = command_result(shown.text) if single else (shown.text, None)
    unfinished = shown.state in ("failed", "running")
    content = raw if isinstance(raw, str) else shown.text
    for index, call in enumerate(calls):
        walk.builder.result(
            call.call_id,
            text if single or not unfinished else None,
            content=content,
            exit_code=exit_code,
            is_error=unfinished,
            timestamp=when,
            observed=observed and index == 0,
        )


def _event(walk: _Walk, event: dict[str, Any], when: Any) -> None:
    builder = walk.builder
    kind = event.get("type")
    if kind == "user_message" and walk.user_events:
        walk.close()
        builder.user(text_of(event.get("message")), timestamp=when)
    elif kind == "patch_apply_end":
        call = builder.find(event.get("call_id"))
        if call is not None:
            call.context["changes"] = event.get("changes")
            call.context["patch_success"] = event.get("success")
    elif kind == "exec_command_end":
        call = builder.find(event.get("call_id"))
        if call is not None:
            call.context["exit_code"] = event.get("exit_code")
    elif kind == "context_compacted":
        builder.compact()
