"""Tool calls written as text inside assistant messages (SWE-trajectory datasets).

SWE-smith rows embed `<function=NAME><parameter=K>V</parameter></function>`; nebius
SWE-agent rows put one command in a fenced block. Observations come back as the next
user message. A message whose markup is not exactly one complete call is recorded as an
`unparsed_markup` call (an OtherTool for replay), never guessed at.
"""

from __future__ import annotations

import re
from typing import Any

from repo2rlenv.formats.base import ParsedSession
from repo2rlenv.formats.builder import SessionBuilder
from repo2rlenv.formats.calls import Call
from repo2rlenv.formats.framing import openhands_observation, swe_agent_observation
from repo2rlenv.formats.swe_common import swe_extra
from repo2rlenv.formats.text import as_dict, as_list, as_str, text_of

_FUNCTION = re.compile(r"<function=([^>\n]+)>(.*?)</function>", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\n]+)>(.*?)</parameter>", re.DOTALL)
_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)
_UPLOADED = re.compile(r"<uploaded_files>\s*\n\s*(\S[^\n]*?)\s*\n\s*</uploaded_files>")
ACI_COMMANDS = frozenset(
    {
        "open",
        "goto",
        "scroll_up",
        "scroll_down",
        "create",
        "edit",
        "search_file",
        "search_dir",
        "find_file",
        "submit",
    }
)
_FAILED = ("Error", "ERROR", "Usage:", "Your proposed edit has introduced")


def function_markup(text: str) -> tuple[str, dict[str, Any]] | None:
    """(name, args) when the text holds exactly one complete function block."""
    blocks = _FUNCTION.findall(text)
    if text.count("<function=") != 1 or len(blocks) != 1:
        return None
    name, body = blocks[0]
    args = {
        key.strip(): value.removeprefix("\n").removesuffix("\n")
        for key, value in _PARAMETER.findall(body)
    }
    return name.strip(), args


def uploaded_root(text: str) -> str | None:
    """The repository root SWE datasets announce in the first user message."""
    match = _UPLOADED.search(text)
    return match.group(1) if match else None


def read_swe_smith(row: dict[str, Any], messages: list[Any], record_id: str) -> ParsedSession:
    builder = SessionBuilder("swe-agent")
    pending: Call | None = None
    cwd: str | None = None
    for raw in messages:
        message = as_dict(raw)
        role, text = message.get("role"), text_of(message.get("content"))
        if role == "assistant":
            step_id = builder.agent(text)
            pending = None
            if "<function=" in text:
                parsed = function_markup(text)
                name, args = parsed if parsed else ("unparsed_markup", {"text": text})
                pending = builder.call(None, name, args, step_id=step_id)
        elif role in ("user", "tool") and pending is not None:
            shown = text.removeprefix("Observation: ")
            output, exit_code, failed = openhands_observation(shown)
            builder.result(
                pending.call_id, output, content=text, is_error=failed, exit_code=exit_code
            )
            pending = None
        elif role == "user":
            cwd = cwd or uploaded_root(text)
            builder.user(text)
        else:
            builder.system(text)
    return builder.finish(
        record_id=record_id,
        source_format="openai-messages/swe-smith",
        agent={"name": "swe-agent", "version": "unknown", "model_name": as_str(row.get("model"))},
        session_id=row.get("traj_id") or row.get("instance_id"),
        cwd=cwd,
        extra=swe_extra(record_id, row),
    )


def read_nebius(row: dict[str, Any], record_id: str) -> ParsedSession:
    builder = SessionBuilder("swe-agent")
    pending: Call | None = None
    cwd: str | None = None
    open_file: str | None = None
    root: str | None = None
    for raw in as_list(row.get("trajectory")):
        item = as_dict(raw)
        role, text = item.get("role"), text_of(item.get("text"))
        if role == "ai":
            step_id = builder.agent(text)
            pending = _fenced_call(builder, step_id, text, cwd, open_file)
        elif role == "user":
            output, shown_file, shown_cwd = swe_agent_observation(text)
            if shown_cwd is not None:
                cwd, open_file, root = shown_cwd, shown_file, root or shown_cwd
            if pending is not None:
                failed = output.lstrip().startswith(_FAILED) or _FAILED[-1] in output
                builder.result(pending.call_id, output, content=text, is_error=failed)
                pending = None
            else:
                builder.user(text)
        else:
            builder.system(text or text_of(item.get("system_prompt")))
    return builder.finish(
        record_id=record_id,
        source_format="openai-messages/nebius",
        agent={
            "name": "swe-agent",
            "version": "unknown",
            "model_name": as_str(row.get("model_name")),
        },
        session_id=row.get("instance_id"),
        cwd=root,
        extra=swe_extra(record_id, row),
    )


def _fenced_call(
    builder: SessionBuilder, step_id: int, text: str, cwd: str | None, open_file: str | None
) -> Call | None:
    blocks = _FENCE.findall(text)
    if not blocks:
        return None
    if len(blocks) > 1:
        return builder.call(None, "unparsed_markup", {"text": text}, step_id=step_id)
    command = blocks[0].strip("\n")
    words = command.split()
    name = words[0] if words and words[0] in ACI_COMMANDS else "bash"
    return builder.call(
        None,
        name,
        {"command": command},
        step_id=step_id,
        context={"cwd": cwd, "open_file": open_file},
    )
