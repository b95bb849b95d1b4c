"""What the vLLM server says it can do, read before a trainer syncs its first adapter.

A trainer pushes each new adapter version to the shared server by name; it must never
fall back to TRL's merged-weights sync, which would overwrite the base weights every
other trainer serves from. Whether adapter sync is possible is the server's answer at
`/server_info` (its resolved config: `lora_config`, `parallel_config`). An answer that
is missing or unreadable is a refusal with a reason, never "it can": a server we know
nothing about is not a server that serves LoRA. Kept apart from `train.grpo.trainer` (TRL
and torch) so the decision is checked without them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SERVER_FIX = (
    "start it with --enable-lora --max-lora-rank R, VLLM_ALLOW_RUNTIME_LORA_UPDATING=1 and "
    "VLLM_SERVER_DEV_MODE=1 (which exposes /server_info), without --data-parallel-size"
)


class TrainerSetupError(RuntimeError):
    """`code`: trainer.server-no-lora and the like; the message says what to change."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


def server_info(get: Callable[[], Any], url: str) -> dict[str, Any]:
    """The server's resolved config from `get` (the client's `get_server_info`), or
    `trainer.server-capability-unknown` when it cannot be read or lacks the fields the
    adapter-sync decision reads (`lora_config`, `parallel_config.data_parallel_size`)."""
    try:
        info = get()
    except Exception as exc:  # any failure to learn the capability is a refusal
        raise TrainerSetupError(
            "trainer.server-capability-unknown",
            f"{url}/server_info did not answer ({type(exc).__name__}: {exc}), so whether "
            f"the server can serve this adapter is unknown; {SERVER_FIX}",
        ) from exc
    parallel = info.get("parallel_config") if isinstance(info, dict) else None
    if (
        not isinstance(info, dict)
        or "lora_config" not in info
        or not isinstance(parallel, dict)
        or "data_parallel_size" not in parallel
    ):
        raise TrainerSetupError(
            "trainer.server-capability-unknown",
            f"{url}/server_info answered without lora_config and "
            f"parallel_config.data_parallel_size; {SERVER_FIX}",
        )
    return info


def require_adapter_sync(can_sync: bool, url: str) -> None:
    """`trainer.server-no-lora` when the server answered but cannot take adapters."""
    if not can_sync:
        raise TrainerSetupError(
            "trainer.server-no-lora",
            f"the vLLM server at {url} cannot serve this adapter; {SERVER_FIX}",
        )
