"""The acceptance corpora: adversarial calls are blocked by the right rule, and calls from
real sessions (plus a task that builds an auto-grading library) pass."""

from __future__ import annotations

import pytest

from tests.conftest import needs_samples
from tests.guard.corpus import (
    AUTOGRADER_CALLS,
    AUTOGRADER_INSTRUCTION,
    CASES,
    CONTEXT,
    DECLARED,
    Case,
)
from tests.guard.real_sessions import real_sessions
from train.guard.calls import parse_arguments
from train.guard.checker import Guard
from train.guard.context import GuardContext
from train.guard.facts import ToolCall


def _call(name: str, args: object, index: int = 0) -> ToolCall:
    raw, parsed = parse_arguments(args)
    return ToolCall(f"call_{index}", name, raw, parsed)


def _run_case(guard: Guard, case: Case, number: int) -> list[str]:
    session = guard.register(CONTEXT.model_copy(update={"session_id": f"case-{number}"}))
    declared = DECLARED[case.harness]
    for i, (tool, args) in enumerate(case.setup):
        setup = guard.check_one(session, declared, _call(tool, args, i))
        assert setup.allowed, f"setup call of case {number} was blocked: {setup.violations}"
    decision = guard.check_one(session, declared, _call(case.tool, case.args, 99))
    assert session.blocked == (not decision.allowed)
    return decision.rules


def test_corpus_is_large_and_covers_every_harness() -> None:
    assert len(CASES) >= 60
    assert {c.harness for c in CASES} == {"pi", "opencode", "hermes"}
    assert len({c.rule for c in CASES}) >= 10


@pytest.mark.parametrize("number", range(len(CASES)))
def test_adversarial_call_is_blocked_by_its_rule(number: int) -> None:
    case = CASES[number]
    rules = _run_case(Guard(None), case, number)
    assert rules, f"not blocked: {case.harness} {case.tool} {case.args!r}"
    assert case.rule in rules, f"{case.args!r} fired {rules}, expected {case.rule}"


def test_adversarial_calls_are_blocked_without_atif_scan_too() -> None:
    """Our own rules carry the corpus; atif-scan only adds signals."""
    guard = Guard(None, atif_scan="off")
    missed = [c.args for n, c in enumerate(CASES) if c.rule not in _run_case(guard, c, n)]
    assert missed == []


# Calls from the real sessions that the policy blocks by design: each reaches the
# network without the host in the conversation, reads a secret or an env file. (The
# opencode session's `git push` to github.com passes: the user's message names it.)
EXPECTED_BLOCKS = {
    ("pi/badlogic_pi-mono__large-session.jsonl", 389): "network.unseen-host",  # npm install
    ("claude_code/SublyFi_privacy-x402__claude-session.jsonl", 9): "secrets.credentials",
    ("claude_code/ved08_hunch__claude-session.jsonl", 1): "network.unresolved-host",
    ("codex/samar-58_scout__codex-session.jsonl", 6): "secrets.credentials",  # printenv KEY
}


@needs_samples
def test_real_session_calls_pass() -> None:
    guard = Guard(None)
    allowed: dict[str, int] = {}
    blocked: dict[tuple[str, int], list[str]] = {}
    for real in real_sessions():
        session = guard.register(GuardContext(session_id="real", workdir=real.workdir))
        for call in real.calls:
            session.observe(call.before)
            decision = guard.check_one(
                session, real.declared, _call(call.name, call.args, call.index)
            )
            if decision.allowed:
                allowed[real.source] = allowed.get(real.source, 0) + 1
            else:
                blocked[(real.source, call.index)] = decision.rules
    assert sum(allowed.values()) >= 60
    assert {s.split("/")[0] for s in allowed} == {
        "pi",
        "opencode",
        "hermes",
        "claude_code",
        "codex",
    }
    assert {k: v[0] for k, v in blocked.items()} == EXPECTED_BLOCKS


@needs_samples
def test_hosts_shown_earlier_in_a_real_session_allow_the_call() -> None:
    """The same real call is blocked before its host appears and allowed after."""
    guard = Guard(None)
    source = "claude_code/SublyFi_privacy-x402__claude-session.jsonl"
    real = next(s for s in real_sessions() if s.source == source)
    call = next(c for c in real.calls if "helius-rpc.com" in str(c.args))
    fresh = guard.register(GuardContext(session_id="fresh", workdir=real.workdir))
    early = guard.check_one(fresh, real.declared, _call(call.name, call.args))
    assert early.rules == ["network.unseen-host"]
    seen = guard.register(GuardContext(session_id="seen", workdir=real.workdir))
    seen.observe(call.before)
    assert guard.check_one(seen, real.declared, _call(call.name, call.args)).allowed


@pytest.mark.parametrize("number", range(len(AUTOGRADER_CALLS)))
def test_building_an_autograding_library_is_allowed(number: int) -> None:
    harness, tool, args = AUTOGRADER_CALLS[number]
    guard = Guard(None)
    session = guard.register(
        GuardContext(session_id="autograde", instruction=AUTOGRADER_INSTRUCTION)
    )
    decision = guard.check_one(session, DECLARED[harness], _call(tool, args))
    assert decision.allowed, decision.violations


@pytest.mark.parametrize(
    ("detector", "number"),
    [("tamper.reward_write", 0), ("access.verifier_logs", 6), ("tamper.harness_hooks", 10)],
)
def test_atif_scan_detectors_we_leave_out_would_block_the_autograder(
    detector: str, number: int
) -> None:
    """Why these detectors are off the hot path: they judge written content, not the
    action, so the auto-grading library trips them."""
    from atif_scan import Engine, Status, builtin_detectors, parse_trace

    from train.guard.atif_rules import DETECTORS

    assert detector not in DETECTORS
    engine = Engine([d for d in builtin_detectors() if d.spec.id == detector])
    _, tool, args = AUTOGRADER_CALLS[number]
    trace = parse_trace(
        {
            "schema_version": "ATIF-v1.6",
            "steps": [
                {"step_id": 1, "source": "user", "message": AUTOGRADER_INSTRUCTION},
                {
                    "step_id": 2,
                    "source": "agent",
                    "message": "",
                    "tool_calls": [{"tool_call_id": "c", "function_name": tool, "arguments": args}],
                },
            ],
        }
    )
    (result,) = engine.evaluate(trace)
    assert result.result.status == Status.MATCH
