"""Property tests: whatever JSON or bytes arrive, the readers answer with a parsed
session or a FormatError carrying a registered reason, never anything else.

Runs are derandomized so CI is reproducible; set FORMATS_FUZZ_EXAMPLES (e.g. 5000)
and FORMATS_FUZZ_RANDOM=1 to hunt for new failures locally.
"""

from __future__ import annotations

import copy
import os
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repo2rlenv.formats import (
    FORMATS,
    REASONS,
    FormatError,
    ParsedSession,
    detect_format,
    iter_file_records,
    read_record,
    unwrap_row,
)
from schemas.trajectory import Trajectory
from tests.conftest import needs_samples
from tests.formats import raw

FUZZ = settings(
    max_examples=int(os.environ.get("FORMATS_FUZZ_EXAMPLES", "150")),
    derandomize=os.environ.get("FORMATS_FUZZ_RANDOM") != "1",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Keys and tags the readers look at, so generated records reach deep into each reader
# instead of stopping at "unknown format".
KEYS = [
    "type",
    "role",
    "message",
    "content",
    "id",
    "parentId",
    "toolCallId",
    "toolName",
    "isError",
    "name",
    "arguments",
    "input",
    "payload",
    "call_id",
    "output",
    "steps",
    "step_id",
    "source",
    "tool_calls",
    "observation",
    "results",
    "source_call_id",
    "function_name",
    "tool_call_id",
    "info",
    "messages",
    "parts",
    "state",
    "status",
    "tool",
    "callID",
    "metadata",
    "exit",
    "text",
    "function",
    "uuid",
    "parentUuid",
    "isSidechain",
    "tool_use_id",
    "is_error",
    "toolUseResult",
    "file",
    "path",
    "file_path",
    "filePath",
    "oldText",
    "newText",
    "old_string",
    "new_string",
    "edits",
    "command",
    "cmd",
    "workdir",
    "offset",
    "limit",
    "schema_version",
    "agent",
    "trajectory",
    "version",
    "cwd",
    "changes",
    "success",
    "stopReason",
    "summary",
    "details",
    "model",
    "timestamp",
    "exit_code",
    "keystrokes",
    "view_range",
    "file_text",
    "old_str",
    "new_str",
    "mode",
    "patch",
    "subagent_trajectory_ref",
    "extra",
    "llm_call_count",
    "metrics",
    "error",
    "startLine",
    "numLines",
    "totalLines",
    "stdout",
    "stderr",
    "interrupted",
    "isMeta",
    "sessionId",
]
TAGS = [
    "message",
    "assistant",
    "user",
    "system",
    "tool",
    "toolResult",
    "toolCall",
    "tool_use",
    "tool_result",
    "text",
    "thinking",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "response_item",
    "event_msg",
    "session",
    "session_meta",
    "turn_context",
    "patch_apply_end",
    "user_message",
    "completed",
    "error",
    "running",
    "agent",
    "ai",
    "ATIF-v1.6",
    "bash",
    "edit",
    "read",
    "write",
    "Bash",
    "Edit",
    "Read",
    "Write",
    "MultiEdit",
    "apply_patch",
    "exec_command",
    "shell",
    "str_replace_editor",
    "execute_bash",
    "create",
    "view",
    "insert",
    "bash_command",
    "write_file",
    "read_file",
    "terminal",
    "patch",
    "replace",
    "c1",
    "c2",
    "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n",
    "OBSERVATION:\nHere's the result of running `cat -n` on a:\n     1\tx\n",
    "<content>\n1: x\n\n(End of file - total 1 lines)\n</content>",
    "Process exited with code 3\nOutput:\nboom",
    "     1|x",
    "1\tx",
    "<function=bash>\n<parameter=command>ls</parameter>\n</function>",
    "```\nedit 1:1\n```",
    "../../etc/passwd",
    "/abs/path",
    "Command exited with code 2",
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 10**12)
    | st.sampled_from(TAGS)
    | st.text(max_size=12)
    | st.floats(allow_nan=False, allow_infinity=False)
)
shaped = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=7)
    ),
    max_leaves=40,
)
small = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)
    ),
    max_leaves=8,
)
anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text() | st.floats(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


def _check(record: Any) -> None:
    fmt = detect_format(record)
    assert fmt is None or fmt in FORMATS
    try:
        parsed = read_record(record, "fuzz")
    except FormatError as error:
        assert error.reason in REASONS
        assert error.reason not in ("format.malformed", "format.invalid-atif"), str(error)
        return
    assert isinstance(parsed, ParsedSession)
    Trajectory.model_validate_json(parsed.trajectory.model_dump_json())
    calls = {c.tool_call_id for s in parsed.trajectory.steps for c in s.tool_calls or []}
    assert {a.call_id for a in parsed.actions if not a.call_id.startswith("user-")} <= calls


@FUZZ
@given(anything)
def test_arbitrary_json_values(value: Any) -> None:
    _check(value)
    if isinstance(value, dict):
        _check(unwrap_row(value))


@FUZZ
@given(shaped)
def test_format_shaped_documents(value: Any) -> None:
    _check(value)


@FUZZ
@given(st.lists(st.dictionaries(st.sampled_from(KEYS), small, max_size=6), max_size=12))
def test_format_shaped_session_lines(lines: list[dict[str, Any]]) -> None:
    _check(lines)


SAMPLES_FOR_MUTATION = [
    "atif/NVIDIA_NeMo-Relay__examples_trajectory.json",
    "atif/harbor-golden__openhands_hello-world.trajectory.json",
    "pi/castai_kimchi-dev__session.jsonl",
    "claude_code/ved08_hunch__claude-session.jsonl",
    "codex/samar-58_scout__codex-session.jsonl",
    "codex/yashpunmiya_Solsmile__codex-session.jsonl",
    "hermes/eriktobben_hermes-backup__session_20260515_202554_b03a52.json",
    "opencode/italo-luz_pfm-categorization__opencode-session.json",
]


@cache
def _originals() -> dict[str, Any]:
    """The real samples to mutate, loaded once, at the first test that needs them."""
    rows = {
        name: raw.load(f"openai_messages/agent-data-protocol__{name}__sample_raw.json")[0]
        for name in ("swe-smith", "nebius_SWE-agent-trajectories")
    }
    return {**{rel: raw.load(rel) for rel in SAMPLES_FOR_MUTATION}, **rows}


def _containers(value: Any, out: list[Any]) -> list[Any]:
    if isinstance(value, dict | list):
        out.append(value)
        children = value.values() if isinstance(value, dict) else value
        for child in children:
            _containers(child, out)
    return out


@needs_samples
@FUZZ
@given(st.data())
def test_mutated_real_samples(data: st.DataObject) -> None:
    originals = _originals()
    name = data.draw(st.sampled_from(sorted(originals)))
    record = copy.deepcopy(originals[name])
    for _ in range(data.draw(st.integers(1, 4))):
        containers = _containers(record, [])
        target = containers[data.draw(st.integers(0, len(containers) - 1))]
        if isinstance(target, dict) and target:
            key = data.draw(st.sampled_from(sorted(target, key=str)))
            if data.draw(st.booleans()):
                del target[key]
            else:
                target[key] = data.draw(shaped)
        elif isinstance(target, list) and target:
            index = data.draw(st.integers(0, len(target) - 1))
            choice = data.draw(st.sampled_from(["drop", "replace", "cut", "duplicate"]))
            if choice == "drop":
                del target[index]
            elif choice == "replace":
                target[index] = data.draw(shaped)
            elif choice == "cut":
                del target[index:]
            else:
                target.insert(index, copy.deepcopy(target[index]))
    _check(record)


@FUZZ
@given(st.binary(max_size=400), st.sampled_from([".jsonl", ".json", ".parquet"]))
def test_arbitrary_bytes_as_files(tmp_path_factory: Any, payload: bytes, suffix: str) -> None:
    _check_file(tmp_path_factory.mktemp("fuzz") / f"f{suffix}", payload)


@FUZZ
@given(st.lists(shaped, max_size=8), st.integers(0, 2000), st.sampled_from([".jsonl", ".json"]))
def test_cut_json_lines_as_files(
    tmp_path_factory: Any, values: list[Any], cut: int, suffix: str
) -> None:
    import json

    text = "\n".join(json.dumps(v) for v in values)
    _check_file(tmp_path_factory.mktemp("fuzz") / f"f{suffix}", text.encode()[: cut or None])


def _check_file(path: Path, payload: bytes) -> None:
    path.write_bytes(payload)
    pairs = list(iter_file_records(path))
    assert pairs
    for record_id, record in pairs:
        assert record_id.startswith(path.name)
        if isinstance(record, FormatError):
            assert record.reason in REASONS
        else:
            _check(record)
