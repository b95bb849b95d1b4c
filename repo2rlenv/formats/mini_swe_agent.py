"""mini-swe-agent trajectories (`*.traj.json`).

Three shapes are published:
- `mini-swe-agent-1` (mini 1.x): `{info, messages, trajectory_format}`; each assistant
  message holds exactly one fenced command (```bash, or ```mswea_bash_command), and its
  output comes back as the next user message: `<returncode>N</returncode><output>…`;
- `mini-swe-agent-1.1` (mini 2.x): the same, but commands are real `tool_calls` (tool
  `bash`) answered by `role: tool` messages in the same framing;
- a bare list of those messages (older saves).

Only the first user message is a request: every later user message is the harness
answering (an observation, a format error, a timeout notice), never a new instruction.
Outputs over 10,000 characters are cut to head and tail (`<elided_chars>`); such an
output is flagged, so replay never takes it as a whole file.
"""

from __future__ import annotations

import re
from typing import Any

from repo2rlenv.formats.base import ParsedSession
from repo2rlenv.formats.builder import SessionBuilder
from repo2rlenv.formats.calls import Call
from repo2rlenv.formats.reasons import fail
from repo2rlenv.formats.swe_common import is_cut, swe_extra
from repo2rlenv.formats.text import as_dict, as_list, as_str, parse_args, text_of

_FENCE = re.compile(r"```(?:bash|mswea_bash_command|sh)[ \t]*\n(.*?)\n?```", re.DOTALL)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_TAGGED = ("output", "output_head", "elided_chars", "output_tail", "exception")
_TAG_MARKS = tuple((tag, f"<{tag}>", f"</{tag}>") for tag in _TAGGED)
"""Each tag with its opening and closing marks, spelled once rather than per message."""
_SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def is_mini_swe_agent(record: Any) -> bool:
    """Recognise a mini-swe-agent run from content: its format tag, or its `info` block
    beside messages, or an observation in its `<returncode>` framing."""
    if isinstance(record, dict):
        tag = as_str(record.get("trajectory_format")) or ""
        if tag.startswith("mini-swe-agent"):
            return True
        info = as_dict(record.get("info"))
        if "mini_version" in info and isinstance(record.get("messages"), list):
            return True
        messages = record.get("messages")
        return isinstance(messages, list) and _has_observation(messages)
    return isinstance(record, list) and _has_observation(record)


def _has_observation(messages: list[Any]) -> bool:
    for raw in messages[:8]:
        message = as_dict(raw)
        if message.get("role") in ("user", "tool"):
            text = text_of(message.get("content")).lstrip()
            if text.startswith(("<returncode>", "<exception>")) and "</returncode>" in text:
                return True
    return False


def observation(text: str) -> tuple[str, int | None, bool, bool]:
    """(output, exit code, failed, cut) from one `<returncode>`-framed message."""
    code_match = _RETURNCODE.search(text)
    code = int(code_match.group(1)) if code_match else None
    parts = {tag: _tag(text, opener, closer) for tag, opener, closer in _TAG_MARKS}
    failed = parts["exception"] is not None
    if parts["output"] is not None:
        output = parts["output"]
    elif parts["output_head"] is not None or parts["output_tail"] is not None:
        elided = (parts["elided_chars"] or "characters elided").strip()
        output = f"{parts['output_head'] or ''}\n[... {elided} ...]\n{parts['output_tail'] or ''}"
    else:
        output = text[code_match.end() :].strip("\n") if code_match else text
    return output, code, failed or code is None, is_cut(text) or parts["output_head"] is not None


def _tag(text: str, opener: str, closer: str) -> str | None:
    start = text.find(opener)
    if start < 0:
        return None  # most observations hold one tag of five: no second scan for the rest
    stop = text.rfind(closer)
    if stop < start:
        return None
    return text[start + len(opener) : stop].removeprefix("\n")


def read_mini_swe_agent(record: dict[str, Any] | list[Any], record_id: str) -> ParsedSession:
    row = record if isinstance(record, dict) else {}
    messages = record if isinstance(record, list) else row.get("messages")
    if not isinstance(messages, list):
        raise fail("format.bad-type", "mini-swe-agent: messages is not a list")
    info = as_dict(row.get("info"))
    builder = SessionBuilder("mini-swe-agent", profile="swe-agent")
    pending: list[Call] = []
    asked = False
    for raw in messages:
        message = as_dict(raw)
        role, text = message.get("role"), text_of(message.get("content"))
        if role == "assistant":
            pending = _calls(builder, message, text)
        elif role == "tool":
            call = builder.find(message.get("tool_call_id")) or (pending[0] if pending else None)
            _answer(builder, call, text)
            pending = [c for c in pending if c is not call]
        elif role == "user" and not asked:
            asked = True
            builder.user(text)
        elif role == "user" and pending:
            _answer(builder, pending.pop(0), text)
        elif role == "user":
            builder.user(
                text, typed_request=False
            )  # format error, timeout notice: the harness speaking
        else:
            builder.system(text)  # system prompt; mini 2.x `exit` message
    version = as_str(info.get("mini_version"))
    tag = as_str(row.get("trajectory_format")) or "mini-swe-agent"
    model = as_dict(as_dict(info.get("config")).get("model")).get("model_name")
    return builder.finish(
        record_id=record_id,
        source_format=tag,
        agent={"name": "mini-swe-agent", "version": version, "model_name": as_str(model)},
        session_id=swe_extra(record_id, row).get("swe", {}).get("instance_id"),
        cwd=_cwd(info),
        extra=swe_extra(
            record_id,
            row,
            exit_status=info.get("exit_status"),
            submission=info.get("submission"),
        ),
    )


def _calls(builder: SessionBuilder, message: dict[str, Any], text: str) -> list[Call]:
    step_id = builder.agent(text, reasoning=as_str(message.get("reasoning_content")))
    calls: list[Call] = []
    for raw in as_list(message.get("tool_calls")):
        call = as_dict(raw)
        function = as_dict(call.get("function"))
        args = parse_args(function.get("arguments"))
        calls.append(builder.call(call.get("id"), function.get("name"), args, step_id=step_id))
    if calls or "tool_calls" in message:
        return calls
    blocks = _FENCE.findall(text)
    if len(blocks) != 1:
        return []  # mini 1.x refuses such a reply and runs nothing
    return [builder.call(None, "bash", {"command": blocks[0]}, step_id=step_id)]


def _answer(builder: SessionBuilder, call: Call | None, text: str) -> None:
    if call is None:
        builder.user(text, typed_request=False)
        return
    output, code, failed, cut = observation(text)
    if cut:
        call.context["output_cut"] = True
    if _SUBMIT in as_str(call.args.get("command") or "") and code is None:
        failed = False  # the submit command's answer is the submission itself
    builder.result(call.call_id, output, content=text, is_error=failed, exit_code=code)


def _cwd(info: dict[str, Any]) -> str | None:
    """The run's working directory as its config states it; SWE-bench images use /testbed."""
    if not info:
        return None
    environment = as_dict(as_dict(info.get("config")).get("environment"))
    return as_str(environment.get("cwd")) or "/testbed"
