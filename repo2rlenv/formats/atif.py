"""ATIF trajectories (v1.1 to v1.8) from Harbor and other exporters, normalised to v1.8.

Inputs are often looser than the spec: messages that are dicts or lists of chat
messages, agent-only fields on user steps, tool results delivered in a later
`source: system` step, no `agent` block at all. Each is repaired here so the output
validates strictly, and every tool result ends up beside the call that produced it.
"""

from __future__ import annotations

import re
from typing import Any

from atif import FinalMetrics, Metrics, SubagentTrajectoryRef
from pydantic import ValidationError

from repo2rlenv.formats.base import ParsedSession
from repo2rlenv.formats.builder import SessionBuilder
from repo2rlenv.formats.framing import claude_bash, openhands_observation
from repo2rlenv.formats.reasons import fail
from repo2rlenv.formats.text import (
    as_dict,
    as_int,
    as_list,
    as_str,
    chat_message_text,
    parse_args,
    text_of,
)
from schemas.trajectory import Trajectory

_VERSION = re.compile(r"ATIF-v(\d+(?:\.\d+)*)")
_AGENT_SOURCES = ("agent", "assistant", "ai", "model")
_USER_SOURCES = ("user", "human")


def read_atif(record: dict[str, Any], record_id: str) -> ParsedSession:
    steps = record.get("steps")
    if not isinstance(steps, list):
        raise fail("format.bad-type", f"atif: steps is {type(steps).__name__}, not a list")
    version = _VERSION.fullmatch(as_str(record.get("schema_version")) or "")
    source_format = f"atif-v{version.group(1)}" if version else "atif"
    agent = as_dict(record.get("agent"))
    harness = as_str(agent.get("name")) or "unknown"
    builder = SessionBuilder(harness)
    for raw in steps:
        _step(builder, as_dict(raw))
    if record.get("continued_trajectory_ref"):
        builder.truncated = True  # the session goes on in another document
    return builder.finish(
        record_id=record_id,
        source_format=source_format,
        agent=agent,
        session_id=record.get("session_id"),
        cwd=_root(agent, steps),
        notes=record.get("notes"),
        final_metrics=_validated(FinalMetrics, record.get("final_metrics")),
        subagents=_subagents(record.get("subagent_trajectories")),
        extra=record.get("extra"),
    )


def _root(agent: dict[str, Any], steps: list[Any]) -> str | None:
    """The session's working folder. ATIF has no field for it; Harbor's Claude Code
    converter records it in `agent.extra.cwds` and each step's `extra.cwd`. One folder
    is the root; several (the agent changed folders) leave it unknown."""
    cwds = as_list(as_dict(agent.get("extra")).get("cwds"))
    if not cwds:
        cwds = [as_dict(as_dict(s).get("extra")).get("cwd") for s in steps]
        cwds = [c for c in cwds if c is not None]
    found = set(cwds)
    if len(found) != 1:
        return None
    root = found.pop()
    return root if isinstance(root, str) and root else None


def _step(builder: SessionBuilder, step: dict[str, Any]) -> None:
    if not step:
        return
    source = step.get("source")
    text, reasoning = _message(step.get("message"))
    fields: dict[str, Any] = {
        "timestamp": step.get("timestamp"),
        "extra": step.get("extra") if isinstance(step.get("extra"), dict) else None,
        "is_copied_context": step.get("is_copied_context")
        if isinstance(step.get("is_copied_context"), bool)
        else None,
        "llm_call_count": _count(step.get("llm_call_count")),
    }
    if source in _AGENT_SOURCES:
        effort = step.get("reasoning_effort")
        step_id = builder.agent(
            text,
            reasoning=as_str(step.get("reasoning_content")) or reasoning,
            model=as_str(step.get("model_name")),
            metrics=_validated(Metrics, step.get("metrics")),
            reasoning_effort=effort if isinstance(effort, str | int | float) else None,
            **fields,
        )
        for call in _calls(step):
            builder.call(
                call.get("tool_call_id") or call.get("id"),
                call.get("function_name") or as_dict(call.get("function")).get("name"),
                parse_args(call.get("arguments", as_dict(call.get("function")).get("arguments"))),
                step_id=step_id,
            )
    elif source in _USER_SOURCES:
        step_id = builder.user(text, **fields)
    else:
        step_id = builder.system(text, **fields)
    results = as_list(as_dict(step.get("observation")).get("results"))
    meta = _claude_meta(step) if len(results) == 1 else {}
    for raw in results:
        _result(builder, step_id, as_dict(raw), meta)


def _claude_meta(step: dict[str, Any]) -> dict[str, Any]:
    """Harbor's Claude Code converter keeps Claude Code's own record of the one result
    of a step in `extra.tool_result_metadata`: `tool_use_result` (the JSONL's
    toolUseResult), `raw_tool_result` (the tool_result block, kept for failures) and
    `is_error`. The observation text adds `[stdout]`/`[metadata]`/`[error]` sections to
    what the tool showed, so status and file content are read from this record instead,
    as the Claude Code reader does."""
    return as_dict(as_dict(step.get("extra")).get("tool_result_metadata"))


def _result(
    builder: SessionBuilder, step_id: int, result: dict[str, Any], meta: dict[str, Any]
) -> None:
    content = result.get("content")
    text = text_of(content) if content is not None else None
    refs = _refs(result.get("subagent_trajectory_ref"))
    extra = dict(result["extra"]) if isinstance(result.get("extra"), dict) else {}
    call_id = result.get("source_call_id")
    call = builder.find(call_id)
    if refs and any("summar" in str(ref).lower() for ref in refs):
        builder.compact()
    if call is None:
        if isinstance(call_id, str):
            extra["source_call_id"] = call_id  # names no call we saw: keep, unlinked
        builder.observe(step_id, text, subagent_trajectory_ref=refs, extra=extra or None)
        return
    exit_code, failed, data = None, False, None
    if text is not None and builder.profile == "openhands":
        text, exit_code, failed = openhands_observation(text)
    elif meta and builder.profile == "claude-code":
        raw = as_dict(meta.get("raw_tool_result"))
        failed = meta.get("is_error") is True or raw.get("is_error") is True
        data = meta.get("tool_use_result")
        shown = text_of(raw["content"]) if "content" in raw else text
        if call.name == "Bash":
            text, exit_code, interrupted = claude_bash(shown or "", data, failed)
            failed = failed or interrupted
        elif failed:
            text = shown
    builder.result(
        call_id,
        text,
        content=text_of(content) if content is not None else None,
        is_error=failed,
        exit_code=exit_code,
        data=data,
        subagent_trajectory_ref=refs,
        extra=extra or None,
    )


def _calls(step: dict[str, Any]) -> list[dict[str, Any]]:
    calls = step.get("tool_calls")
    if calls is None and isinstance(step.get("message"), dict):
        calls = step["message"].get("tool_calls")  # OpenAI message dict carrying the calls
    return [c for c in as_list(calls) if isinstance(c, dict)]


def _message(message: Any) -> tuple[str, str | None]:
    if isinstance(message, str):
        return message, None
    if isinstance(message, list):
        if any(isinstance(m, dict) and "role" in m for m in message):
            return chat_message_text(message), None
        return text_of(message), None
    if isinstance(message, dict):
        reasoning = as_str(message.get("reasoning_content")) or as_str(message.get("reasoning"))
        return text_of(message.get("content")), reasoning
    return text_of(message), None


def _count(value: Any) -> int | None:
    count = as_int(value)
    return count if count is not None and count >= 0 else None


def _validated(model: Any, value: Any) -> Any:
    if not isinstance(value, dict):
        return None
    try:
        return model.model_validate(value)
    except ValidationError:
        return None


def _refs(value: Any) -> list[Any] | None:
    items = [value] if isinstance(value, dict) else as_list(value)
    refs = [r for r in (_validated(SubagentTrajectoryRef, i) for i in items) if r is not None]
    return refs or None


def _subagents(value: Any) -> list[Trajectory] | None:
    kept: list[Trajectory] = []
    seen: set[str] = set()
    for item in as_list(value):
        sub = _validated(Trajectory, item)
        if sub is not None and sub.trajectory_id and sub.trajectory_id not in seen:
            seen.add(sub.trajectory_id)
            kept.append(sub)
    return kept or None
