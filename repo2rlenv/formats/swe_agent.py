"""SWE-agent trajectories (`.traj`): `{environment, trajectory, history, info}`.

`history` is the conversation the model saw: the system prompt, the instance prompt,
then per step an assistant message (`thought`, `action`, and in the function-calling
format `tool_calls`) and its observation (a user message, or `role: tool` with
`tool_call_ids`). `trajectory` holds the same steps as `{action, observation, thought,
state}`; it is read only when `history` is missing. Demonstration messages
(`is_demo`) are prompt material from another run: kept as system text, never actions.

Observations end with SWE-agent's footer `(Open file: F)(Current directory: D)`; the
open file is what `edit`/`insert` act on, so it travels with each call.
"""

from __future__ import annotations

import re
from typing import Any

from repo2rlenv.formats.base import ParsedSession
from repo2rlenv.formats.builder import SessionBuilder
from repo2rlenv.formats.calls import Call
from repo2rlenv.formats.framing import swe_agent_observation
from repo2rlenv.formats.markup import ACI_COMMANDS
from repo2rlenv.formats.reasons import fail
from repo2rlenv.formats.swe_common import is_cut, swe_extra
from repo2rlenv.formats.text import as_dict, as_list, as_str, loads_or_none, parse_args, text_of

_SHA = re.compile(r"[0-9a-f]{40}")
_TOOLS = ACI_COMMANDS | {"insert", "str_replace_editor", "bash"}
_FAILED = ("Error:", "ERROR:", "Usage:", "Your proposed edit has introduced", "Warning: File")


def is_swe_agent(record: Any) -> bool:
    """`history` of role messages tagged with SWE-agent's `agent` / `message_type`
    fields, or a `trajectory` of `{action, observation}` steps."""
    if not isinstance(record, dict):
        return False
    for item in as_list(record.get("history"))[:8]:
        item = as_dict(item)
        if "role" in item and ("agent" in item or "message_type" in item):
            return True
    steps = as_list(record.get("trajectory"))[:8]
    return bool(steps) and all(
        isinstance(s, dict) and "action" in s and "observation" in s for s in steps
    )


class _Walk:
    def __init__(self) -> None:
        self.builder = SessionBuilder("swe-agent", profile="swe-agent-traj")
        self.open_file: str | None = None
        self.cwd: str | None = None
        self.root: str | None = None
        self.pending: list[Call] = []
        self.asked = False

    def assistant(self, text: str, action: str | None, tool_calls: list[Any]) -> None:
        step_id = self.builder.agent(text)
        context = {"open_file": self.open_file, "cwd": self.cwd}
        self.pending = []
        for raw in tool_calls:
            call = as_dict(raw)
            function = as_dict(call.get("function"))
            args = parse_args(function.get("arguments"))
            self.pending.append(
                self.builder.call(
                    call.get("id"), function.get("name"), args, step_id=step_id, context=context
                )
            )
        if tool_calls or not action or not action.strip():
            return
        command = action.strip("\n")
        first = command.split(maxsplit=1)[0]
        name = first if first in _TOOLS else "bash"
        self.pending.append(
            self.builder.call(None, name, {"command": command}, step_id=step_id, context=context)
        )

    def observe(self, text: str, call_ids: list[Any]) -> None:
        output, open_file, cwd = swe_agent_observation(text)
        if cwd is not None:
            self.open_file, self.cwd = open_file, cwd
            self.root = self.root or cwd
        call = next((self.builder.find(i) for i in call_ids if self.builder.find(i)), None)
        call = call or (self.pending[0] if self.pending else None)
        if call is None:
            if self.asked:
                self.builder.user(text, typed_request=False)  # the harness speaking, not a request
            else:
                self.asked = True
                self.builder.user(text)
            return
        self.pending = [c for c in self.pending if c is not call]
        if is_cut(output):
            call.context["output_cut"] = True
        failed = output.lstrip().startswith(_FAILED) or _FAILED[3] in output
        self.builder.result(call.call_id, output, content=text, is_error=failed)


def read_swe_agent(record: dict[str, Any], record_id: str) -> ParsedSession:
    if not isinstance(record, dict):
        raise fail("format.bad-type", "swe-agent: a .traj file is a JSON object")
    walk = _Walk()
    history = as_list(record.get("history"))
    if history:
        _history(walk, history)
        variant = "swe-agent-traj"
    else:
        _steps(walk, as_list(record.get("trajectory")))
        variant = "swe-agent-traj/steps"
    info = as_dict(record.get("info"))
    if any(isinstance(h, dict) and h.get("tool_calls") for h in history):
        variant = "swe-agent-traj/function-calling"
    return walk.builder.finish(
        record_id=record_id,
        source_format=variant,
        agent={
            "name": "swe-agent",
            "version": as_str(info.get("swe_agent_version")),
            "model_name": as_str(as_dict(info.get("model_stats")).get("model")),
        },
        session_id=swe_extra(record_id, record).get("swe", {}).get("instance_id"),
        cwd=walk.root,
        extra=swe_extra(
            record_id,
            record,
            exit_status=info.get("exit_status"),
            submission=info.get("submission"),
            base_commit=_base_commit(record),
        ),
    )


def _base_commit(record: dict[str, Any]) -> str | None:
    """SWE-agent 1.x keeps its run config (`replay_config`, a JSON string or object); its
    `env.repo.base_commit` is the commit the `testbed` checkout started from."""
    config = record.get("replay_config")
    config = loads_or_none(config) if isinstance(config, str) else config
    repo = as_dict(as_dict(as_dict(config).get("env")).get("repo"))
    commit = as_str(repo.get("base_commit"))
    return commit if commit and _SHA.fullmatch(commit) else None


def _history(walk: _Walk, history: list[Any]) -> None:
    for raw in history:
        item = as_dict(raw)
        role, text = item.get("role"), text_of(item.get("content"))
        if item.get("is_demo"):
            walk.builder.system(text)
        elif role == "assistant":
            thought = as_str(item.get("thought")) or text
            walk.assistant(thought, as_str(item.get("action")), as_list(item.get("tool_calls")))
        elif role in ("user", "tool"):
            walk.observe(text, as_list(item.get("tool_call_ids")))
        else:
            walk.builder.system(text)


def _steps(walk: _Walk, steps: list[Any]) -> None:
    for raw in steps:
        step = as_dict(raw)
        thought = as_str(step.get("thought")) or as_str(step.get("response")) or ""
        walk.assistant(thought, as_str(step.get("action")), [])
        observation = as_str(step.get("observation"))
        if observation is not None and walk.pending:
            walk.observe(observation, [])
