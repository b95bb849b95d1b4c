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

What an audit costs, and the two cuts (docs/guard.md, "What an audit costs"):
- The task's instruction is put in the trace only when a chosen check reads it. Every
  detector in `DETECTORS` is a `SurfaceDetector`, which reads the agent's own steps
  (`Trace.agent_surfaces`) and nothing else, and there is no allowance, so the
  instruction cannot change a finding; it only cost the trace builder a scan of up to
  4,000 characters on every call (0.13 ms of a 0.3 ms audit at a median-sized
  instruction of 1.4 kB, 0.3 ms at 4,000 characters). `reads_prompt` says whether it
  is needed; should a check that reads it be chosen, it goes back in.
- A verdict is remembered (`VERDICTS`, bounded): an audit is a pure function of the call's
  name and its action arguments (and the instruction when it is read), and a policy
  repeats calls (`ls`, `pytest -q`, within an episode and across the rollouts of one
  task). The key is the JSON of exactly what the trace is built from, so two calls
  share a verdict only when atif-scan would be given the same input (`1` and `1.0`,
  `true` and `1`, key order all stay apart).

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

from collections import OrderedDict
from functools import lru_cache
from typing import Any

from train.guard import wire
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


MAX_VERDICTS = 4096
MAX_VERDICT_KEY_CHARS = 4096
"""A call whose key is longer is audited every time rather than remembered, so the cache
holds at most 64 MB (4,096 keys of 4,096 characters of 4 bytes) however large the calls
a policy makes; a typical key is under 200 characters."""


@lru_cache(maxsize=1)
def _engine() -> Any:
    from atif_scan import Engine, builtin_detectors

    chosen = [d for d in builtin_detectors() if d.spec.id in DETECTORS]
    return Engine(chosen)


@lru_cache(maxsize=1)
def reads_prompt() -> bool:
    """Whether a chosen check can read more than the agent's own steps: an allowance,
    a rule, or a detector that is not a `SurfaceDetector` (those read only
    `Trace.agent_surfaces`). Only then does the instruction go into the trace."""
    from atif_scan.detectors.text import SurfaceDetector

    engine = _engine()
    return bool(engine.allowances) or not all(
        isinstance(check, SurfaceDetector) for check in engine.checks.values()
    )


def _trace(call: ToolCall, instruction: str, *, prompt: bool | None = None) -> Any:
    """The one-call trace. `prompt` (default: `reads_prompt()`) puts the instruction in
    as the user's step; `True` always builds the full trace (the tests compare both)."""
    from atif_scan import parse_trace

    agent = {
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
    }
    steps: list[dict[str, Any]] = [agent]
    if reads_prompt() if prompt is None else prompt:
        steps.insert(0, {"step_id": 1, "source": "user", "message": instruction[:4000] or "task"})
    return parse_trace(
        {
            "schema_version": "ATIF-v1.6",
            "session_id": "guard",
            "agent": {"name": "guard", "version": "1"},
            "steps": steps,
        }
    )


def scan(call: ToolCall, instruction: str, *, prompt: bool | None = None) -> list[Violation]:
    """atif-scan's findings on one call (at most one: the first detector that matches),
    uncached. A trace atif-scan refuses to read is no finding."""
    from atif_scan import Status

    try:
        trace = _trace(call, instruction, prompt=prompt)
    except Exception:
        return []
    found = []
    for assessment in _engine().evaluate(trace):
        if assessment.counts and assessment.result.status == Status.MATCH:
            found.append(Violation(f"atif.{assessment.spec.id}", assessment.spec.title))
    return found[:1]


class Verdicts:
    """Remembered audit verdicts, least recently used first out. `hits` counts the
    audits it answered."""

    def __init__(self, size: int = MAX_VERDICTS) -> None:
        self.size = size
        self.hits = 0
        self._seen: OrderedDict[str, tuple[tuple[str, str], ...]] = OrderedDict()

    @staticmethod
    def key(call: ToolCall, instruction: str) -> str | None:
        """Exactly what the trace is built from, as JSON (orjson keeps key order and
        tells `1`, `1.0` and `true` apart); None when too long to keep."""
        parts: list[Any] = [call.name, action_arguments(call.args or {})]
        if reads_prompt():
            parts.append(instruction[:4000])
        try:
            key = wire.dumps(parts)
        except (TypeError, ValueError):
            return None
        return key if len(key) <= MAX_VERDICT_KEY_CHARS else None

    def __call__(self, call: ToolCall, instruction: str) -> list[Violation]:
        key = self.key(call, instruction)
        if key is not None:
            known = self._seen.get(key)
            if known is not None:
                self._seen.move_to_end(key)
                self.hits += 1
                return [Violation(rule, detail) for rule, detail in known]
        found = scan(call, instruction)
        if key is not None:
            self._seen[key] = tuple((v.rule, v.detail) for v in found)
            if len(self._seen) > self.size:
                self._seen.popitem(last=False)
        return found


VERDICTS = Verdicts()
"""One per process: the guard's (audits run on the loop) and the audit worker's."""


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
    reads_prompt()


class AtifScanRule:
    """Callable rule; `instruction` lets atif-scan's allowances see what the task said.
    The detectors are built on first use (or by `warm`): behind the proxy the audits
    run in a worker process, and the proxy's own process never needs them."""

    def __init__(self, instruction: str = "") -> None:
        self.instruction = instruction

    def __call__(self, call: ToolCall, facts: CallFacts, view: SessionView) -> list[Violation]:
        return VERDICTS(call, self.instruction)
