"""The device check's trainer process: `python -m train.device_check.trainer SPEC.json`.

The real run's trainer (train.grpo.trainer_process.build_trainer) with two parts swapped:
a runner that asks the server for one chat completion under the request's adapter
name instead of running a harness, and the server's adapter client wrapped so every
load and unload is recorded. Both write JSONL beside the trainer for the parent to
check (train.device_check.check.judge).
"""

from __future__ import annotations

import json
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from train.grpo.trainer_process import OUTCOME, TrainerOutcome, TrainerSpec
from train.rollout.contract import Rollout, RolloutRequest, Turn

REQUESTS, SLOTS = "requests.jsonl", "slots.jsonl"


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.load(response)


class CompletionRunner:
    """A rollout = one real chat completion under the adapter the request names; each
    request's adapter name is appended to `log` for the parent to check."""

    def __init__(self, base_url: str, log: Path, max_tokens: int = 16) -> None:
        self.base_url, self.log, self.max_tokens = base_url.rstrip("/"), log, max_tokens
        self._lock = threading.Lock()

    def __call__(self, request: RolloutRequest) -> Rollout:
        began = time.time()
        try:
            data = _post(f"{self.base_url}/v1/chat/completions", {
                "model": request.adapter,
                # The harness in the prompt: two trainers fed the same prompts, seeds and
                # scores train byte-identical adapters (seen in CI), which no output can
                # tell apart, so the proof that each name serves its own would fail.
                "messages": [{"role": "user", "content": f"{request.harness} task "
                              f"{request.task_id}, try {request.attempt}."}],
                "max_tokens": self.max_tokens, "temperature": 1.0, "top_p": 1.0,
                "seed": request.seed + request.attempt, "logprobs": True,
                "return_token_ids": True,
            })  # fmt: skip
            choice = data["choices"][0]
            ids = choice["token_ids"]
            turn = Turn(
                prompt_token_ids=data["prompt_token_ids"], completion_token_ids=ids,
                completion_logprobs=[t["logprob"] for t in choice["logprobs"]["content"]],
                model=data["model"],
            )  # fmt: skip
        except Exception as exc:  # a rollout never raises: the scheduler retries it
            return Rollout(request=request, status="failed", error=f"{exc}"[:500],
                           started_at=began, finished_at=time.time())  # fmt: skip
        # What was asked only: the answer's `model` is the request's, copied (the
        # parent proves each adapter by its output instead, train.device_check.proof).
        self._record({"asked": request.adapter})
        score = sum(1 for token in ids if token % 2 == 0) / max(1, len(ids))
        return Rollout(request=request, status="scored", verifier_score=score, reward=score,
                       turns=[turn], started_at=began, finished_at=time.time())  # fmt: skip

    def _record(self, entry: dict[str, str]) -> None:
        with self._lock, self.log.open("a") as out:
            out.write(json.dumps(entry) + "\n")


class RecordingSlots:
    """The server's adapter client, with every load and unload written to `log`."""

    def __init__(self, inner: Any, log: Path) -> None:
        self.inner, self.log = inner, log

    def load(self, name: str, path: Path) -> None:
        self._record("load", name)
        self.inner.load(name, path)

    def unload(self, name: str) -> None:
        self._record("unload", name)
        self.inner.unload(name)

    def loaded(self) -> list[str]:
        return self.inner.loaded()

    def _record(self, op: str, name: str) -> None:
        with self.log.open("a") as out:
            out.write(json.dumps({"op": op, "name": name}) + "\n")


def trainer_main(spec_path: Path) -> int:
    """One trainer's process; exit 0 when it trained."""
    from train.grpo.trainer_process import train_one
    from train.serving.adapters import AdapterClient

    spec = TrainerSpec.model_validate_json(spec_path.read_text())
    runner = CompletionRunner(spec.server_url, spec.home / REQUESTS)
    slots = RecordingSlots(AdapterClient(spec.server_url), spec.home / SLOTS)
    try:
        outcome = train_one(spec, runner, slots)
    except Exception as exc:
        import traceback

        traceback.print_exc()
        outcome = TrainerOutcome(harness=spec.harness, adapters=spec.home / "adapters",
                                 error=f"{type(exc).__name__}: {exc}"[:2000])  # fmt: skip
    (spec.home / OUTCOME).write_text(outcome.model_dump_json() + "\n")
    return 0 if outcome.error is None else 1


if __name__ == "__main__":
    raise SystemExit(trainer_main(Path(sys.argv[1])))
