"""The device check's proof that a name serves its own adapter, decided on a fake
server: adapters that answer as the base (or as each other) fail it, adapters whose
output differs pass, and a difference within the server's repeat noise is no proof."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from train.device_check.proof import Answer, Ask, prove

BASE = "tiny"


def _server(
    outputs: dict[str, tuple[list[int], list[float]]], jitter: float = 0.0
) -> tuple[Ask, list[str]]:
    """A fake server: each name's greedy answer, every other ask of a name shifted by
    `jitter` (a server whose kernels are not bitwise repeatable). Records what was asked."""
    asked: list[str] = []
    turns: dict[str, Iterator[int]] = {}

    def ask(model: str) -> Answer:
        asked.append(model)
        tokens, logprobs = outputs[model]
        shift = jitter * next(turns.setdefault(model, itertools.cycle((0, 1))))
        return Answer(token_ids=tokens, logprobs=[v + shift for v in logprobs])

    return ask, asked


BASE_OUT = ([5, 6, 7], [-0.5, -1.0, -1.5])


def test_an_adapter_that_answers_as_the_base_is_not_proven() -> None:
    ask, asked = _server({BASE: BASE_OUT, "pi-policy-v2": BASE_OUT})
    (proof,) = prove(ask, BASE, ["pi-policy-v2"])
    assert not proof.differs_from_base and proof.delta == 0.0
    assert proof.reason is not None and "as the base model tiny does" in proof.reason
    assert asked.count(BASE) == 2 and asked.count("pi-policy-v2") == 2  # repeats measured


def test_adapters_whose_output_differs_from_the_base_and_each_other_are_proven() -> None:
    ask, _ = _server({
        BASE: BASE_OUT,
        "pi-policy-v2": ([5, 6, 7], [-0.5, -1.0, -1.4999]),  # same tokens, logprobs moved
        "hermes-policy-v2": ([5, 9, 7], [-0.5, -0.2, -1.5]),  # another greedy token
    })  # fmt: skip
    pi, hermes = prove(ask, BASE, ["pi-policy-v2", "hermes-policy-v2"])
    assert pi.reason is None and pi.differs_from_base and not pi.tokens_differ
    assert 0 < pi.delta < 1e-3 and pi.noise == 0.0
    assert hermes.reason is None and hermes.tokens_differ and hermes.same_as == []


def test_two_names_that_answer_alike_are_not_their_own_adapters() -> None:
    moved = ([5, 6, 8], [-0.5, -1.0, -0.1])
    ask, _ = _server({BASE: BASE_OUT, "pi-policy-v2": moved, "hermes-policy-v2": moved})
    pi, hermes = prove(ask, BASE, ["pi-policy-v2", "hermes-policy-v2"])
    assert pi.differs_from_base and pi.same_as == ["hermes-policy-v2"]
    assert pi.reason == "pi-policy-v2 answers the fixed prompt as hermes-policy-v2 does"
    assert hermes.reason is not None and hermes.same_as == ["pi-policy-v2"]


def test_a_difference_within_the_repeat_noise_is_no_proof() -> None:
    close = ([5, 6, 7], [-0.5, -1.0, -1.5005])
    far = ([5, 6, 7], [-0.5, -1.0, -1.6])
    ask, _ = _server({BASE: BASE_OUT, "pi-policy-v2": close, "hermes-policy-v2": far},
                     jitter=1e-3)  # fmt: skip
    pi, hermes = prove(ask, BASE, ["pi-policy-v2", "hermes-policy-v2"])
    assert pi.noise == hermes.noise > 0
    assert not pi.differs_from_base and pi.reason is not None
    assert hermes.differs_from_base and hermes.reason is None


def test_a_base_whose_greedy_tokens_change_leaves_nothing_to_prove() -> None:
    answers = iter([BASE_OUT, ([1, 2, 3], [-0.1, -0.1, -0.1])])

    def ask(model: str) -> Answer:
        tokens, logprobs = next(answers) if model == BASE else ([9], [-3.0])
        return Answer(token_ids=tokens, logprobs=logprobs)

    (proof,) = prove(ask, BASE, ["pi-policy-v2"])
    assert not proof.differs_from_base
    assert proof.reason is not None and "greedy output of tiny changed" in proof.reason
