"""Hostile and damaged input: cut files, wrong types, huge lines, binary bytes, paths
that try to escape, very long sessions, empty files. Nothing may crash; every refusal
carries a registered reason code."""

from __future__ import annotations

import builtins
import json
import os
from pathlib import Path
from typing import Any

import pytest

from repo2rlenv.formats import (
    REASONS,
    EditFile,
    FormatError,
    ReadFile,
    RunCommand,
    WriteFile,
    files,
    iter_file_records,
    read_record,
)
from tests.conftest import SAMPLES, needs_samples
from tests.formats import raw

JSONL_SAMPLES = sorted(p.relative_to(SAMPLES).as_posix() for p in SAMPLES.rglob("*.jsonl"))


def _only(path: Path) -> Any:
    pairs = list(iter_file_records(path))
    assert len(pairs) == 1
    return pairs[0][1]


def _refused(path: Path) -> str:
    record = _only(path)
    assert isinstance(record, FormatError), record
    assert record.reason in REASONS
    return record.reason


@pytest.mark.parametrize("rel", JSONL_SAMPLES, ids=[r.split("/")[-1][:40] for r in JSONL_SAMPLES])
def test_jsonl_cut_mid_line_is_marked_truncated(rel: str, tmp_path: Path) -> None:
    data = (SAMPLES / rel).read_bytes()
    lines = data.split(b"\n")
    keep = len(lines) // 2
    cut = b"\n".join(lines[:keep]) + b"\n" + lines[keep][: max(1, len(lines[keep]) // 2)]
    target = tmp_path / Path(rel).name
    target.write_bytes(cut)
    assert not read_record(_only(SAMPLES / rel), "full").truncated
    # cut mid-line: the history stops at an unknown point, so no task comes from it
    # (nor does it win a duplicate check against the complete copy): issue 29
    assert _refused(target) == "format.truncated"
    assert f"line ({keep + 1})" in str(_only(target))


@pytest.mark.parametrize("rel", JSONL_SAMPLES, ids=[r.split("/")[-1][:40] for r in JSONL_SAMPLES])
def test_jsonl_cut_mid_session_keeps_results_beside_calls(rel: str, tmp_path: Path) -> None:
    lines = (SAMPLES / rel).read_text().splitlines(keepends=True)
    target = tmp_path / Path(rel).name
    target.write_text("".join(lines[: len(lines) * 2 // 3]))
    parsed = read_record(_only(target), "cut")
    assert not parsed.truncated  # a cut at a line boundary is indistinguishable from an end
    for step in parsed.trajectory.steps:
        ids = {c.tool_call_id for c in step.tool_calls or []}
        assert all(
            r.source_call_id in ids | {None}
            for r in (step.observation.results if step.observation else [])
        )


@needs_samples
def test_a_corrupt_line_inside_a_session_sets_truncated(tmp_path: Path) -> None:
    lines = (SAMPLES / "pi/castai_kimchi-dev__session.jsonl").read_text().splitlines()
    lines[40] = lines[40][:-7]
    target = tmp_path / "s.jsonl"
    target.write_text("\n".join(lines) + "\n")
    record = _only(target)
    assert any(isinstance(item, files.BadLine) and item.line == 41 for item in record)
    assert read_record(record, "s").truncated


@needs_samples
def test_session_with_only_a_header_and_a_cut_line_is_truncated(tmp_path: Path) -> None:
    first = (SAMPLES / "pi/castai_kimchi-dev__session.jsonl").read_text().splitlines()[:2]
    target = tmp_path / "s.jsonl"
    target.write_text(first[0] + "\n" + first[1][:20])
    assert _refused(target) == "format.truncated"


WRONG = [None, 7, "text", [], {"k": 1}, True]


def _paths(value: Any, prefix: tuple = (), seen: set | None = None) -> list[tuple]:
    """One concrete path per distinct field shape (list indexes folded), so every field
    of every format gets each wrong type once without exploding the test time."""
    seen = set() if seen is None else seen
    out = []
    if isinstance(value, dict):
        for key, child in value.items():
            path = (*prefix, key)
            shape = tuple("*" if isinstance(p, int) else p for p in path)
            if shape not in seen:
                seen.add(shape)
                out.append(path)
            out.extend(_paths(child, path, seen))
    elif isinstance(value, list):
        for index, child in enumerate(value[:60]):
            out.extend(_paths(child, (*prefix, index), seen))
    return out


def _swap(record: Any, path: tuple, value: Any) -> Any:
    parent = record
    for part in path[:-1]:
        parent = parent[part]
    old = parent[path[-1]]
    parent[path[-1]] = value
    return old


MUTATED = [
    "atif/NVIDIA_NeMo-Relay__examples_trajectory.json",
    "atif/harbor-golden__terminus_2_hello-world-context-summarization.trajectory.json",
    "atif/harbor-golden__openhands_hello-world.trajectory.json",
    "pi/castai_kimchi-dev__session.jsonl",
    "claude_code/ved08_hunch__claude-session.jsonl",
    "claude_code/YatharthPnwr_Flux__claude-session.jsonl",
    "codex/samar-58_scout__codex-session.jsonl",
    "opencode/italo-luz_pfm-categorization__opencode-session.json",
    "hermes/eriktobben_hermes-backup__session_20260515_202554_b03a52.json",
    "openai_messages/agent-data-protocol__swe-smith__sample_raw.json",
    "openai_messages/agent-data-protocol__nebius_SWE-agent-trajectories__sample_raw.json",
    "openai_messages/agent-data-protocol__swe-gym_openhands_sampled_trajectories__sample_raw.json",
]


@needs_samples
@pytest.mark.parametrize("rel", MUTATED, ids=[r.split("/")[-1][:40] for r in MUTATED])
def test_wrong_types_in_every_field_never_crash(rel: str) -> None:
    record = raw.load(rel)
    if rel.startswith("openai_messages/"):
        record = record[0]
    outcomes: set[str] = set()
    for path in _paths(record):
        for value in WRONG:
            old = _swap(record, path, value)
            try:
                read_record(record, "mutated")
                outcomes.add("parsed")
            except FormatError as error:
                assert error.reason in REASONS
                outcomes.add(error.reason)
            finally:
                _swap(record, path, old)
    assert "parsed" in outcomes  # most single-field damage is survivable
    assert "format.malformed" not in outcomes, "a reader hit an unhandled shape"


def test_huge_line_is_refused_with_the_real_cap(tmp_path: Path) -> None:
    target = tmp_path / "big.jsonl"
    with target.open("w") as handle:
        handle.write(json.dumps({"type": "session", "version": 3, "id": "x"}) + "\n")
        handle.write('{"type": "message", "pad": "' + "a" * files.MAX_LINE_BYTES + '"}\n')
    assert _refused(target) == "format.too-large"


def test_huge_cell_in_a_dataset_row_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(files, "MAX_LINE_BYTES", 1000)
    with pytest.raises(FormatError) as caught:
        files.unwrap_row({"path": "s.jsonl", "content": "{" + " " * 2000 + "}"})
    assert caught.value.reason == "format.too-large"


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b'{"a": 1}\n\x00\x01\x02garbage\n', "format.binary"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "format.binary"),
        (b'{"role": "user", "content": "caf\xe9"}\n', "format.not-utf8"),
        (b"\xff\xfe{\x00}\x00", "format.binary"),
    ],
)
@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_binary_and_non_utf8_files(
    payload: bytes, reason: str, suffix: str, tmp_path: Path
) -> None:
    target = tmp_path / f"f{suffix}"
    target.write_bytes(payload)
    assert _refused(target) == reason


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("e.jsonl", b"", "format.empty"),
        ("e.jsonl", b"\n  \n\n", "format.empty"),
        ("e.json", b"", "format.empty"),
        ("e.json", b"  \n", "format.empty"),
        ("e.json", b"[]", "format.empty"),
        ("e.json", b"42", "format.bad-type"),
        ("e.json", b'{"steps": [', "format.bad-json"),
        ("e.jsonl", b"not json\nneither\n", "format.bad-json"),
        ("e.txt", b"{}", "format.unsupported-file"),
    ],
)
def test_empty_and_unusable_files(name: str, content: bytes, reason: str, tmp_path: Path) -> None:
    target = tmp_path / name
    target.write_bytes(content)
    assert _refused(target) == reason


def test_records_that_are_not_sessions() -> None:
    for record, reason in [
        ({"hello": "world"}, "format.unknown"),
        ([1, 2, 3], "format.unknown"),
        ({"type": "session", "version": 3, "id": "x", "cwd": "/"}, "format.unknown"),
        ([{"type": "session", "version": 3, "id": "x", "cwd": "/"}], "format.no-messages"),
        ({"schema_version": "ATIF-v1.6", "steps": []}, "format.no-messages"),
        ({"schema_version": "ATIF-v1.6", "steps": {}}, "format.unknown"),
    ]:
        with pytest.raises(FormatError) as caught:
            read_record(record, "r")
        assert caught.value.reason == reason, record


ESCAPES = [
    "../../../../etc/passwd",
    "/etc/shadow",
    "~/.ssh/id_rsa",
    "..\\..\\windows\\win.ini",
    "/proc/self/environ",
    "a/../../b",
]


def _pi_session(path: str) -> list[dict]:
    def call(i: int, name: str, args: dict) -> dict:
        return {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": f"c{i}", "name": name, "arguments": args}],
            },
        }

    def result(i: int, text: str) -> dict:
        return {
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": f"c{i}",
                "content": [{"type": "text", "text": text}],
                "isError": False,
            },
        }

    return [
        {"type": "session", "id": "s", "cwd": "/project"},
        {"type": "message", "message": {"role": "user", "content": "go"}},
        call(1, "write", {"path": path, "content": "x"}),
        result(1, "ok"),
        call(2, "edit", {"path": path, "oldText": "x", "newText": "y"}),
        result(2, "ok"),
        call(3, "read", {"path": path}),
        result(3, "y"),
        call(4, "bash", {"command": f"cat {path}"}),
        result(4, "y"),
    ]


@pytest.mark.parametrize("path", ESCAPES)
def test_escaping_paths_pass_through_untouched_and_nothing_is_opened(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _pi_session(path)

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"reader touched the filesystem: {args}")

    for target, name in [
        (builtins, "open"),
        (os, "stat"),
        (os, "lstat"),
        (os, "listdir"),
        (os, "scandir"),
        (os.path, "exists"),
    ]:
        monkeypatch.setattr(target, name, forbidden)
    parsed = read_record(record, "escape")
    monkeypatch.undo()
    write, edit, read, command = parsed.actions
    assert isinstance(write, WriteFile) and write.path == path
    assert isinstance(edit, EditFile) and edit.path == path
    assert isinstance(read, ReadFile) and read.path == path and read.content == "y"
    assert isinstance(command, RunCommand) and command.command == f"cat {path}"


def test_ten_thousand_step_sessions_parse_completely() -> None:
    steps = 10_000
    pi = [{"type": "session", "version": 3, "id": "root", "cwd": "/w"}]
    parent = "root"
    for i in range(steps):
        pi.append(
            {
                "type": "message",
                "id": f"a{i}",
                "parentId": parent,
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "toolCall",
                            "id": f"t{i}",
                            "name": "bash",
                            "arguments": {"command": f"echo {i}"},
                        }
                    ],
                },
            }
        )
        pi.append(
            {
                "type": "message",
                "id": f"r{i}",
                "parentId": f"a{i}",
                "message": {
                    "role": "toolResult",
                    "toolCallId": f"t{i}",
                    "isError": False,
                    "content": [{"type": "text", "text": str(i)}],
                },
            }
        )
        parent = f"r{i}"
    pi.insert(
        1,
        {
            "type": "message",
            "id": "u",
            "parentId": "root",
            "message": {"role": "user", "content": "count"},
        },
    )
    pi[2]["parentId"] = "u"
    parsed = read_record(pi, "long-pi")
    assert len(parsed.actions) == steps and parsed.actions[-1].output == str(steps - 1)
    terminus = {
        "schema_version": "ATIF-v1.5",
        "agent": {"name": "terminus-2", "version": "2"},
        "steps": [{"step_id": 1, "source": "user", "message": "go"}]
        + [
            {
                "step_id": i + 2,
                "source": "agent",
                "message": "",
                "tool_calls": [
                    {
                        "tool_call_id": f"c{i}",
                        "function_name": "bash_command",
                        "arguments": {"keystrokes": f"echo {i}\n"},
                    }
                ],
                "observation": {"results": [{"content": f"screen {i}"}]},
            }
            for i in range(steps)
        ],
    }
    parsed = read_record(terminus, "long-terminus")
    assert [a.output for a in parsed.actions[-2:]] == [f"screen {steps - 2}", f"screen {steps - 1}"]


def test_a_codex_output_whose_call_id_is_a_list_is_read_not_crashed() -> None:
    """The fuzz found it: a `call_id` of another JSON type reached a dict lookup
    (TypeError: unhashable type: 'list'), a crash where a damaged record must be read."""
    lines = [
        {"type": "session_meta", "payload": {"id": "s", "cwd": "/w"}},
        {"type": "response_item",
         "payload": {"type": "message", "role": "user", "content": "run it"}},
        {"type": "response_item",
         "payload": {"type": "function_call", "name": "shell", "call_id": "c1",
                     "arguments": json.dumps({"command": ["ls"]})}},
        {"type": "response_item",
         "payload": {"type": "function_call_output", "call_id": ["c1"], "output": "x"}},
    ]  # fmt: skip
    session = read_record(lines, "r")
    assert session.source_format == "codex"
