"""The run's stop of its trainer processes: a trainer that does not stop within its grace
is killed, and the run records why it ended on its behalf (CI saw a trainer, busy in a
step on a loaded machine, killed before it could write its own outcome)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from train.grpo.trainer_process import OUTCOME, TrainerOutcome
from train.launch.run import _stop

IGNORES_SIGTERM = (
    "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('ready', flush=True); time.sleep(120)"
)
STOPS_AND_WRITES = (
    "import json, signal, sys, time\n"
    "def stop(*_):\n"
    "    open(sys.argv[1], 'w').write(json.dumps({'harness': 'own', 'adapters': 'a',"
    " 'error': 'run.interrupted', 'steps': 3}))\n"
    "    raise SystemExit(130)\n"
    "signal.signal(signal.SIGTERM, stop)\n"
    "print('ready', flush=True)\n"
    "time.sleep(120)\n"
)


class _Spec:
    def __init__(self, harness: str, home: Path) -> None:
        self.harness, self.home = harness, home


def _start(code: str, *args: str) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    return process


@pytest.mark.timeout(60)
def test_a_trainer_killed_after_its_grace_gets_the_runs_reason(tmp_path: Path) -> None:
    stubborn, polite = tmp_path / "stubborn", tmp_path / "polite"
    stubborn.mkdir(), polite.mkdir()
    (stubborn / "metrics.jsonl").write_text(
        "".join(json.dumps({"harness": "stubborn", "step": i}) + "\n" for i in (1, 2))
    )
    processes = {
        "stubborn": _start(IGNORES_SIGTERM),
        "polite": _start(STOPS_AND_WRITES, str(polite / OUTCOME)),
    }
    specs = [_Spec("stubborn", stubborn), _Spec("polite", polite)]
    _stop(processes, specs, "run.interrupted", grace_s=1.0)  # type: ignore[arg-type]

    assert all(p.poll() is not None for p in processes.values())
    killed = TrainerOutcome.model_validate_json((stubborn / OUTCOME).read_text())
    assert (killed.error, killed.killed, killed.harness) == ("run.interrupted", True, "stubborn")
    own = json.loads((polite / OUTCOME).read_text())
    assert own["harness"] == "own" and own["steps"] == 3  # its own outcome is kept
