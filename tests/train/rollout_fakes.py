"""Recorded-style rollouts and runner doubles for the scheduler, samples, packing and
metrics unit tests (no Docker, no vLLM): each rollout is built the way a real runner
would, with the reward from `train.data.reward` and guard turns whose token ids extend."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from train.data.reward import reward
from train.rollout.contract import Group, Rollout, RolloutRequest, RolloutStatus, Turn

Outcome = tuple[RolloutStatus, float, int]
"""(status, verifier score, blocked calls) a fake runner returns for a request."""


def request(
    group_id: int = 0, attempt: int = 0, version: int = 0, harness: str = "pi", task: str = "t0"
) -> RolloutRequest:
    return RolloutRequest(
        task_id=task,
        task_dir=Path("/tasks") / task,
        harness=harness,
        adapter=f"{harness}-policy-v{version}",
        model_version=version,
        group_id=group_id,
        attempt=attempt,
        session_id=f"s-{harness}-{group_id}-{attempt}",
    )


def chain_turns(model: str, sizes: list[tuple[int, int]], start: int = 1000) -> list[Turn]:
    """Turns whose prompts extend each other: (tool-result tokens, completion tokens)."""
    turns: list[Turn] = []
    context: list[int] = []
    token = start
    for added, generated in sizes:
        prompt = context + list(range(token, token + added))
        token += added
        completion = list(range(token, token + generated))
        token += generated
        logprobs = [-(i + 1) / 100 for i in range(generated)]
        turns.append(Turn(prompt_token_ids=prompt, completion_token_ids=completion,
                          completion_logprobs=logprobs, model=model))  # fmt: skip
        context = prompt + completion
    return turns


def rollout(
    req: RolloutRequest,
    status: RolloutStatus = "scored",
    score: float = 1.0,
    blocked: int = 0,
    sizes: list[tuple[int, int]] | None = None,
) -> Rollout:
    sizes = sizes if sizes is not None else [(20, 5), (8, 4)]
    scored = status == "scored"
    return Rollout(
        request=req,
        status=status,
        verifier_score=score if scored else None,
        reward=reward(score, calls=len(sizes), blocked_calls=blocked) if scored else 0.0,
        tool_calls=len(sizes),
        blocked_calls=blocked,
        turns=chain_turns(req.adapter, sizes, start=1000 * (req.attempt + 1)) if scored else [],
        error=None if scored else "harness.crashed",
    )


def group(outcomes: list[Outcome], group_id: int = 0, version: int = 0) -> Group:
    rollouts = [
        rollout(request(group_id, n, version), status, score, blocked)
        for n, (status, score, blocked) in enumerate(outcomes)
    ]
    return Group(group_id=group_id, task_id="t0", harness="pi", first_version=version,
                 rollouts=rollouts)  # fmt: skip


class FakeRunner:
    """Thread-safe runner double: records every request and the peak concurrency;
    `decide` picks the outcome (or raises), `gate` can hold a request until released."""

    def __init__(
        self,
        decide: Callable[[RolloutRequest, int], Outcome] | None = None,
        gate: Callable[[RolloutRequest], threading.Event | None] | None = None,
    ) -> None:
        self.decide = decide or (lambda req, n: ("scored", float(req.attempt % 2), 0))
        self.gate = gate
        self.requests: list[RolloutRequest] = []
        self.started = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._running = 0
        self.peak = 0

    def __call__(self, req: RolloutRequest) -> Rollout:
        with self._lock:
            self.requests.append(req)
            tries = sum(
                1 for r in self.requests if (r.group_id, r.attempt) == (req.group_id, req.attempt)
            )
            self._running += 1
            self.peak = max(self.peak, self._running)
        self.started.release()
        try:
            event = self.gate(req) if self.gate else None
            if event is not None:
                event.wait()
            status, score, blocked = self.decide(req, tries - 1)
            return rollout(req, status, score, blocked)
        finally:
            with self._lock:
                self._running -= 1
