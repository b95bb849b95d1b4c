"""Every real sample file parses, and its tool calls and results are all accounted for.

Counts come from `tests.formats.raw`, a plain walk of the raw JSON; the reader must
agree with it exactly, per record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from repo2rlenv.formats import FormatError, ParsedSession, detect_format, iter_file_records
from repo2rlenv.formats import read_record as read
from schemas.trajectory import SESSION_EXTRA_KEY, Trajectory
from tests.conftest import SAMPLES, needs_samples
from tests.formats import raw

pytestmark = needs_samples

Counter = Callable[[Any], tuple[int, int]]

# path, raw counter, detected format, source_format, harness
CASES: list[tuple[str, Counter, str, str, str]] = [
    (
        "atif/NVIDIA_NeMo-Relay__examples_trajectory.json",
        raw.atif,
        "atif",
        "atif-v1.6",
        "example-agent",
    ),
    (
        "atif/harbor-golden__openhands_hello-world.trajectory.json",
        raw.atif,
        "atif",
        "atif-v1.5",
        "openhands",
    ),
    (
        "atif/harbor-golden__terminus_2_hello-world-context-summarization.trajectory.json",
        raw.atif,
        "atif",
        "atif-v1.5",
        "terminus-2",
    ),
    (
        "atif/harbor-golden__terminus_2_hello-world-invalid-json.trajectory.json",
        raw.atif,
        "atif",
        "atif-v1.5",
        "terminus-2",
    ),
    (
        "atif/harbor-golden__terminus_2_hello-world-timeout.trajectory.json",
        raw.atif,
        "atif",
        "atif-v1.5",
        "terminus-2",
    ),
    (
        "atif/huggingface_atif-scan__examples_synthetic.json",
        raw.atif,
        "atif",
        "atif-v1.7",
        "unknown",
    ),
    ("pi/castai_kimchi-dev__session.jsonl", raw.pi, "pi", "pi-v3", "pi"),
    ("pi/badlogic_pi-mono__large-session.jsonl", raw.pi, "pi", "pi-v1", "pi"),
    (
        "claude_code/SublyFi_privacy-x402__claude-session.jsonl",
        raw.claude,
        "claude-code",
        "claude-code",
        "claude-code",
    ),
    (
        "claude_code/YatharthPnwr_Flux__claude-session.jsonl",
        raw.claude,
        "claude-code",
        "claude-code",
        "claude-code",
    ),
    (
        "claude_code/ved08_hunch__claude-session.jsonl",
        raw.claude,
        "claude-code",
        "claude-code",
        "claude-code",
    ),
    ("codex/samar-58_scout__codex-session.jsonl", raw.codex, "codex", "codex", "codex"),
    ("codex/yashpunmiya_Solsmile__codex-session.jsonl", raw.codex, "codex", "codex", "codex"),
    ("codex/SublyFi_privacy-x402__codex-session.jsonl", raw.codex, "codex", "codex", "codex"),
    (
        "opencode/iesta_TUIPTV__opencode_session.json",
        raw.opencode,
        "opencode",
        "opencode",
        "opencode",
    ),
    (
        "opencode/italo-luz_pfm-categorization__opencode-session.json",
        raw.opencode,
        "opencode",
        "opencode",
        "opencode",
    ),
    (
        "hermes/eriktobben_hermes-backup__session_20260515_202554_b03a52.json",
        lambda doc: raw.chat(doc["messages"]),
        "hermes",
        "hermes-json",
        "hermes",
    ),
    (
        "hermes/eriktobben_hermes-backup__20260515_202926_d07b8c3a.jsonl",
        raw.chat,
        "hermes",
        "hermes-jsonl",
        "hermes",
    ),
    (
        "openai_messages/agent-data-protocol__swe-gym_openhands_sampled_trajectories__sample_raw"
        ".json",
        lambda row: raw.chat(row["messages"]),
        "openai-messages",
        "openai-messages/swe-gym",
        "openhands",
    ),
    (
        "openai_messages/agent-data-protocol__swe-smith__sample_raw.json",
        raw.swe_smith,
        "openai-messages",
        "openai-messages/swe-smith",
        "swe-agent",
    ),
    (
        "openai_messages/agent-data-protocol__nebius_SWE-agent-trajectories__sample_raw.json",
        raw.nebius,
        "openai-messages",
        "openai-messages/nebius",
        "swe-agent",
    ),
]
IDS = [case[0].split("/")[1][:48] for case in CASES]


def _raw_records(rel: str) -> list[Any]:
    """Raw rows for dataset-row files (a JSON array of rows), else the whole file."""
    data = raw.load(rel)
    return data if rel.startswith("openai_messages/") else [data]


def _sessions(rel: str) -> list[tuple[str, ParsedSession, Any]]:
    pairs = list(iter_file_records(SAMPLES / rel))
    errors = [(rid, r) for rid, r in pairs if isinstance(r, FormatError)]
    assert not errors, errors
    return [(rid, read(record, rid), record) for rid, record in pairs]


def test_every_sample_file_has_a_case() -> None:
    on_disk = {
        p.relative_to(SAMPLES).as_posix()
        for p in SAMPLES.rglob("*")
        if p.suffix in (".json", ".jsonl") and "notebooks" not in p.parts
    }
    assert on_disk == {case[0] for case in CASES}


@pytest.mark.parametrize(("rel", "counter", "fmt", "source_format", "harness"), CASES, ids=IDS)
def test_sample_parses_with_raw_counts(
    rel: str, counter: Counter, fmt: str, source_format: str, harness: str
) -> None:
    sessions = _sessions(rel)
    raw_records = _raw_records(rel)
    assert len(sessions) == len(raw_records)
    for (rid, session, record), raw_record in zip(sessions, raw_records, strict=True):
        assert detect_format(record) == fmt
        assert (session.source_format, session.harness) == (source_format, harness)
        steps = session.trajectory.steps
        calls = sum(len(step.tool_calls or []) for step in steps)
        results = sum(len(step.observation.results) for step in steps if step.observation)
        assert (calls, results) == counter(raw_record), rid
        # one action per call, none invented; a compaction drops the earlier ones
        dropped = calls - len(session.actions)
        assert dropped == 0 or 0 < dropped <= session.dropped_events, rid
        assert session.trajectory.extra[SESSION_EXTRA_KEY]["record_id"] == rid


@pytest.mark.parametrize("rel", [case[0] for case in CASES], ids=IDS)
def test_output_is_strict_atif_with_results_beside_their_calls(rel: str) -> None:
    for _, session, _ in _sessions(rel):
        trajectory = session.trajectory
        again = Trajectory.model_validate_json(trajectory.model_dump_json())
        # the builder assembles the session without re-validating it: it must still pass
        # strict validation, and validating it must not change it
        assert ParsedSession.model_validate(session.model_dump()).model_dump() == (
            session.model_dump()
        )
        assert [s.step_id for s in again.steps] == list(range(1, len(again.steps) + 1))
        for step in trajectory.steps:
            ids = {c.tool_call_id for c in step.tool_calls or []}
            for result in step.observation.results if step.observation else []:
                assert result.source_call_id is None or result.source_call_id in ids
            if step.source != "agent":
                assert step.tool_calls is None and step.model_name is None
        by_step = {s.step_id: s for s in trajectory.steps}
        for action in session.actions:
            calls = by_step[action.step_id].tool_calls or []
            assert action.call_id in {c.tool_call_id for c in calls}
        step_order = [event.step_id for event in session.events]
        assert step_order == sorted(step_order)
