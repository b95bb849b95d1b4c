"""The evidence a refused reference carries: which tests failed and how the verifier ended.

A reference that scores below 1.0 with a clean `solve.sh` has no `detail` of its own;
the verifier's output holds why. Without it the refusal read `reference scored 0 (want
1.0).` and nothing else (issue 28: every real SWE run of a mine refused that way, with
the cause, a wrong Werkzeug, nowhere to be seen). pytest's short summary names each
failing test (`FAILED path::test - error`, `ERROR path::test`); the last lines say what
the grader counted.
"""

from __future__ import annotations

import re

from repo2rlenv.runtime import TrialResult

_FAILING = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)
TESTS_SHOWN = 5
LAST_LINES = 6


def verifier_evidence(trial: TrialResult) -> str:
    """`failing: a, b (+N more); verifier ended: line | line`, from the trial's verifier
    output; empty when the verifier printed nothing."""
    log = trial.verifier_log_tail
    parts = []
    failing = list(dict.fromkeys(_FAILING.findall(log)))
    if failing:
        more = len(failing) - TESTS_SHOWN
        shown = ", ".join(failing[:TESTS_SHOWN]) + (f" (+{more} more)" if more > 0 else "")
        parts.append(f"failing: {shown}")
    last = [line.strip() for line in log.splitlines() if line.strip()][-LAST_LINES:]
    if last:
        parts.append("verifier ended: " + " | ".join(last))
    return "; ".join(parts)
