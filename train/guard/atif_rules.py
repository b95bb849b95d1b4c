"""atif-scan's detectors as one guard rule, run on a one-call ATIF trace.

atif-scan (MIT, huggingface/atif-scan) reviews whole trajectories; the guard asks it
about one call at a time: the call is wrapped in a two-step trace (the task's
instruction, then the agent step) and only the detectors in `DETECTORS` run. Measured
on the 724 calls of the real sample sessions (`benchmarks/guard_bench.py`, part 3):
trace plus these detectors cost about 0.2-0.3 ms per call at p50 and up to ~1.3 ms at
p99, against 1.3-2 ms for all 87 built-in detectors (most of which judge a whole run:
timestamps, token totals, benchmark awareness). Our own rules cost 0.02-0.04 ms at p50.
That is why the default mode is an audit after the response (`checker.AtifMode`).

Written payloads (a write tool's content, an edit's new text) are not passed to it:
content is not an action, and scanning a 10 kB file cost about 4 ms.

Detectors left out on purpose: `tamper.harness_hooks` flags every conftest.py write
(projects legitimately add fixtures; `tamper.test-runner` reads the content for hooks
instead); `tamper.reward_write` and `tamper.test_files` match heredoc bodies and paths
in written files (a task that builds an auto-grading library writes code mentioning
`reward.json`; `tamper.verifier-files` judges the action instead);
`access.verifier_logs` matches a heredoc that writes a file mentioning `/logs/verifier`
(same mistake); `access.environment_dump` and `access.harness_credentials` duplicate
`secrets.credentials`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from train.guard.calls import CONTENT_KEYS, NEW_TEXT_KEYS
from train.guard.facts import CallFacts, ToolCall, Violation
from train.guard.rules import SessionView

PAYLOAD_KEYS = frozenset(
    {*CONTENT_KEYS, *NEW_TEXT_KEYS, "edits", "oldText", "oldString", "old_string", "old_str"}
)
MAX_ARGUMENT_CHARS = 8192

DETECTORS = (
    "tamper.test_runner_patch",
    "tamper.grader_process_attack",
    "tamper.caller_frame_read",
    "tamper.proof_checker_bypass",
    "tamper.harness_tokens",
    "access.test_path",
)


@lru_cache(maxsize=1)
def _engine() -> Any:
    from atif_scan import Engine, builtin_detectors

    chosen = [d for d in builtin_detectors() if d.spec.id in DETECTORS]
    return Engine(chosen)


def _trace(call: ToolCall, instruction: str) -> Any:
    from atif_scan import parse_trace

    return parse_trace(
        {
            "schema_version": "ATIF-v1.6",
            "session_id": "guard",
            "agent": {"name": "guard", "version": "1"},
            "steps": [
                {"step_id": 1, "source": "user", "message": instruction[:4000] or "task"},
                {
                    "step_id": 2,
                    "source": "agent",
                    "message": "",
                    "tool_calls": [
                        {
                            "tool_call_id": call.id or "call",
                            "function_name": call.name,
                            "arguments": action_arguments(call.args or {}),
                        }
                    ],
                },
            ],
        }
    )


def action_arguments(args: dict[str, Any]) -> dict[str, Any]:
    """The call without file payloads: written content is not an action (and scanning a
    10 kB file costs atif-scan about 4 ms); long strings are clipped."""
    out: dict[str, Any] = {}
    for key, value in args.items():
        if key in PAYLOAD_KEYS:
            continue
        out[key] = value[:MAX_ARGUMENT_CHARS] if isinstance(value, str) else value
    return out


def warm() -> None:
    """Builds the detectors now (about 0.2 s), not on the first call checked."""
    _engine()


class AtifScanRule:
    """Callable rule; `instruction` lets atif-scan's allowances see what the task said.
    The detectors are built on first use (or by `warm`): behind the proxy the audits
    run in a worker process, and the proxy's own process never needs them."""

    def __init__(self, instruction: str = "") -> None:
        self.instruction = instruction

    def __call__(self, call: ToolCall, facts: CallFacts, view: SessionView) -> list[Violation]:
        from atif_scan import Status

        try:
            trace = _trace(call, self.instruction)
        except Exception:  # a trace atif-scan refuses to read is no finding
            return []
        found = []
        for assessment in _engine().evaluate(trace):
            if assessment.counts and assessment.result.status == Status.MATCH:
                found.append(Violation(f"atif.{assessment.spec.id}", assessment.spec.title))
        return found[:1]
