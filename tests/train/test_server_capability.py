"""A trainer refuses a server whose LoRA capability it cannot read (no fail-open): the
decision without TRL or torch; the trainer's use of it is in test_trainer.py."""

from __future__ import annotations

from typing import Any

import pytest

from train.serving.capability import TrainerSetupError, require_adapter_sync, server_info

URL = "http://127.0.0.1:9"
ABLE = {"lora_config": {"max_lora_rank": 32, "max_loras": 6},
        "parallel_config": {"data_parallel_size": 1}}  # fmt: skip


def _raises(exc: Exception) -> Any:
    def get() -> Any:
        raise exc

    return get


@pytest.mark.parametrize(
    "get",
    [
        _raises(ConnectionError("refused")),
        _raises(RuntimeError("404 Client Error: Not Found for url: /server_info")),
        lambda: {"model_config": {}},  # answered, but not what the decision reads
        lambda: {"lora_config": None, "parallel_config": None},
        lambda: ["not", "a", "config"],
    ],
)
def test_an_unreadable_capability_is_a_refusal_with_a_reason(get: Any) -> None:
    with pytest.raises(TrainerSetupError) as info:
        server_info(get, URL)
    assert info.value.code == "trainer.server-capability-unknown"
    message = str(info.value)
    assert "\n" not in message and f"{URL}/server_info" in message
    assert "VLLM_SERVER_DEV_MODE=1" in message  # names the fix


def test_a_readable_capability_is_returned_and_a_no_is_refused() -> None:
    assert server_info(lambda: ABLE, URL) == ABLE
    no_lora = {"lora_config": None, "parallel_config": {"data_parallel_size": 1}}
    assert server_info(lambda: no_lora, URL) == no_lora  # known: the decision says no
    require_adapter_sync(True, URL)
    with pytest.raises(TrainerSetupError, match=r"^trainer\.server-no-lora: .*--enable-lora"):
        require_adapter_sync(False, URL)
