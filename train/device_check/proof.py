"""Proof by output that a name on the server serves its own adapter.

The `model` field of a vLLM answer is copied from the request, so "the server answered
`pi-policy-v2` with `pi-policy-v2`" proves nothing: a server that ignored the adapter
and served the base weights would answer the same. What does prove it is the output: on
one fixed prompt with greedy decoding (temperature 0, so the answer is a function of
the weights alone), an adapter's tokens or, when the tokens agree, the logprobs of those
tokens must differ from the base model's, and from every other trained adapter's (two
names served from one slot would agree). "Differ" means by more than the server's own
repeat noise: the base and each adapter are asked twice, and a difference no larger
than what asking the same name twice gives is no proof. A base whose greedy tokens
change between two asks leaves nothing to compare against: the proof fails with that
reason. The decision (`prove`) takes the asking as a function, so it is checked with a
fake server; `ask_server` is the real one.
"""

from __future__ import annotations

import json
import math
import urllib.request
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

PROMPT = "Count from one to five, then name a colour."
"""The fixed prompt: any text works (the tiny model's tokenizer is byte-level)."""
MAX_TOKENS = 8
SEED = 0


class Answer(BaseModel):
    """One greedy completion of PROMPT: its token ids and each token's logprob."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    token_ids: list[int]
    logprobs: list[float]


class AdapterProof(BaseModel):
    """Whether `adapter`'s output differs from the base's and from the other adapters'.
    `delta` is the largest logprob difference from the base over the shared tokens
    (infinite when the tokens differ), `noise` the largest repeat-to-repeat difference
    seen on the same name; `reason` says why the proof failed (None when it holds)."""

    model_config = ConfigDict(extra="forbid")

    adapter: str
    base: str
    tokens_differ: bool
    delta: float
    noise: float
    differs_from_base: bool
    same_as: list[str]
    reason: str | None = None


Ask = Callable[[str], Answer]
"""Asks the server for PROMPT under a model name (the base or an adapter)."""


def difference(a: Answer, b: Answer) -> float:
    """Infinite when the greedy tokens differ; else the largest logprob difference."""
    if a.token_ids != b.token_ids or len(a.logprobs) != len(b.logprobs):
        return math.inf
    return max((abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True)), default=0.0)


def prove(ask: Ask, base: str, adapters: list[str]) -> list[AdapterProof]:
    """One proof per adapter name (see the module)."""
    base_first, base_again = ask(base), ask(base)
    base_noise = difference(base_first, base_again)
    answers: dict[str, Answer] = {}
    noise: dict[str, float] = {}
    for name in adapters:
        answers[name] = ask(name)
        noise[name] = max(base_noise, difference(answers[name], ask(name)))
    proofs = []
    for name in adapters:
        answer, floor = answers[name], noise[name]
        delta = difference(answer, base_first)
        same_as = [
            other
            for other in adapters
            if other != name and difference(answer, answers[other]) <= max(floor, noise[other])
        ]
        reason = None
        if math.isinf(floor):
            reason = (
                f"greedy output of {base if math.isinf(base_noise) else name} changed between "
                "two identical requests: nothing repeatable to compare"
            )
        elif delta <= floor:
            reason = (
                f"{name} answers the fixed prompt as the base model {base} does (largest "
                f"logprob difference {delta:.3g}, repeat noise {floor:.3g}): the adapter's "
                "effect is not shown"
            )
        elif same_as:
            reason = f"{name} answers the fixed prompt as {', '.join(same_as)} does"
        proofs.append(
            AdapterProof(
                adapter=name,
                base=base,
                tokens_differ=answer.token_ids != base_first.token_ids,
                delta=delta,
                noise=floor,
                differs_from_base=not math.isinf(floor) and delta > floor,
                same_as=same_as,
                reason=reason,
            )
        )
    return proofs


def ask_server(base_url: str, timeout_s: float = 120.0) -> Ask:
    """Greedy chat completions of PROMPT from the server at `base_url`."""

    def ask(model: str) -> Answer:
        body = {
            "model": model,
            "messages": [{"role": "user", "content": PROMPT}],
            "max_tokens": MAX_TOKENS,
            "temperature": 0.0,
            "seed": SEED,
            "logprobs": True,
            "return_token_ids": True,
        }
        request = urllib.request.Request(
            f"{base_url.rstrip('/')}/v1/chat/completions",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            choice = json.load(response)["choices"][0]
        return Answer(
            token_ids=choice["token_ids"],
            logprobs=[t["logprob"] for t in choice["logprobs"]["content"]],
        )

    return ask
