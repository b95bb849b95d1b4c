"""Wrapped sessions seen in published files: Hermes request dumps and the
`{"format": "openai-chat", "messages": [...]}` export. Excerpts written in their shape."""

from __future__ import annotations

import json

from repo2rlenv.formats import RunCommand, detect_format, read_record

TOKEN = "sk-proj-Ab3dE...9xYz"


def _messages() -> list[dict]:
    return [
        {"role": "system", "content": "You are Hermes Agent."},
        {"role": "user", "content": "Run the tests"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "terminal", "arguments": '{"command": "pytest -q"}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": '{"output": "2 passed in 0.02s", "exit_code": 0, "error": null}',
        },
    ]


def test_hermes_request_dump_reads_the_body_and_never_the_headers() -> None:
    dump = {
        "timestamp": "2026-11-02T09:12:44.120394",
        "session_id": "20261102_091200_ab12cd",
        "reason": "non_retryable_client_error",
        "request": {
            "method": "POST",
            "url": "https://openrouter.example/api/v1/chat/completions",
            "headers": {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
            "body": {"model": "anthropic/claude-sonnet-4", "messages": _messages(), "tools": []},
        },
        "error": {"type": "BadRequestError", "message": "Error code: 400"},
    }
    assert detect_format(dump) == "hermes"
    parsed = read_record(dump, "request_dump_1.json")
    assert parsed.source_format == "hermes-request-dump"
    assert parsed.trajectory.session_id == "20261102_091200_ab12cd"
    (run,) = parsed.actions
    assert isinstance(run, RunCommand) and run.exit_code == 0
    dumped = json.dumps(parsed.trajectory.model_dump(mode="json"))
    assert "Ab3dE" not in dumped and "Bearer" not in dumped


def test_openai_chat_envelope_is_openai_messages_not_hermes() -> None:
    record = {"format": "openai-chat", "session_id": "s-1", "messages": _messages()}
    assert detect_format(record) == "openai-messages"
    parsed = read_record(record, "export.json")
    assert parsed.source_format == "openai-messages"
    assert parsed.user_turns[0].text == "Run the tests"
