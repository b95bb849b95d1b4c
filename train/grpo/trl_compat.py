"""The one module that imports trl: its version pin, the CPU workarounds, sample conversion.

TRL's async GRPO lives in `trl.experimental` and moves (with renamed config fields) in
1.18, so every import of it sits here and the installed version is checked before the
first one: a different trl fails with a message naming the pin instead of deep inside a
training step. On a machine without CUDA two things in TRL 1.16.0 break, and both are
patched here, only there: the MFU probe asks CUDA for the device name, and the trainer
loads the model with its `tree_fa3` attention, whose kernel is downloaded from the Hub
and needs a GPU. The replacement computes the same tree attention with plain torch.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import math
import os
import time
from pathlib import Path
from typing import Any

REQUIRED_TRL = "1.16.0"


class TrlVersionError(ImportError):
    """trl is missing or not the pinned release; the message says which one to install."""


def _check_version() -> None:
    try:
        found = importlib.metadata.version("trl")
    except importlib.metadata.PackageNotFoundError as exc:
        raise TrlVersionError(
            f"trl is not installed; the trainer needs trl=={REQUIRED_TRL} "
            "(`make train-deps`, or pip install 'rlenv-harvest[train]')"
        ) from exc
    if found != REQUIRED_TRL:
        raise TrlVersionError(
            f"trl {found} is installed; the trainer needs trl=={REQUIRED_TRL} (its async GRPO "
            f"API moves in later releases): pip install trl=={REQUIRED_TRL}"
        )


_check_version()
# The experimental module is pinned on purpose (above); its import warning says nothing new.
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from peft import LoraConfig  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402
from transformers import AttentionInterface, TrainerCallback  # noqa: E402
from transformers.masking_utils import AttentionMaskInterface  # noqa: E402
from trl.experimental.async_grpo import async_grpo_trainer as _trainer_module  # noqa: E402
from trl.experimental.async_grpo.async_grpo_config import AsyncGRPOConfig  # noqa: E402
from trl.experimental.async_grpo.async_grpo_trainer import (  # noqa: E402
    AsyncGRPOTrainer,
    DataCollatorForRollout,
    RolloutQueueDataset,
    save_lora_adapter,
    select_adapter_sync,
    validate_lora_for_vllm_sync,
)
from trl.experimental.async_grpo.async_rollout_worker import RolloutSample  # noqa: E402
from trl.experimental.async_grpo.packing import TREE_ATTENTION, TreeRow  # noqa: E402

from train.data.config import LoraSettings, TrainConfig  # noqa: E402
from train.rollout.contract import TrainingRow  # noqa: E402

__all__ = [
    "REQUIRED_TRL",
    "TREE_ATTENTION",
    "AsyncGRPOConfig",
    "AsyncGRPOTrainer",
    "DataCollatorForRollout",
    "DataLoader",
    "LoraConfig",
    "RolloutQueueDataset",
    "RolloutSample",
    "SampleError",
    "TrainerCallback",
    "TreeRow",
    "TrlVersionError",
    "grpo_config",
    "lora_config",
    "placeholder_dataset",
    "save_lora_adapter",
    "select_adapter_sync",
    "to_rollout_sample",
    "tree_attention_torch",
    "validate_lora_for_vllm_sync",
]


def tree_attention_torch(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    *,
    tree_kv_index: torch.Tensor,
    tree_cu_seqlens_q: torch.Tensor,
    tree_cu_seqlens_k: torch.Tensor,
    tree_max_seqlen_q: int | None = None,
    tree_max_seqlen_k: int | None = None,
    scaling: float | None = None,
    sliding_window: int | None = None,
    softcap: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """TRL's tree attention without the flash kernel: each packed segment's queries attend,
    causally and aligned to the end, to the keys of its root-to-segment path. Same inputs
    and output layout as `trl...packing.tree_attention` ((1, N, heads, dim))."""
    q = query[0]  # (heads, N, dim)
    k = key[0].index_select(1, tree_kv_index)  # (kv_heads, K, dim)
    v = value[0].index_select(1, tree_kv_index)
    if q.shape[0] != k.shape[0]:
        repeat = q.shape[0] // k.shape[0]
        k, v = k.repeat_interleave(repeat, 0), v.repeat_interleave(repeat, 0)
    scale = scaling if scaling is not None else 1.0 / math.sqrt(q.shape[-1])
    bounds_q, bounds_k = tree_cu_seqlens_q.tolist(), tree_cu_seqlens_k.tolist()
    pieces = []
    for s in range(len(bounds_q) - 1):
        qs = q[:, bounds_q[s] : bounds_q[s + 1]]
        ks = k[:, bounds_k[s] : bounds_k[s + 1]]
        vs = v[:, bounds_k[s] : bounds_k[s + 1]]
        lq, lk = qs.shape[1], ks.shape[1]
        if lq == lk and not sliding_window and not softcap:
            # A root segment (its path is itself): plain causal attention, which torch
            # runs without materialising the (lq x lk) scores, long prompts included.
            pieces.append(
                torch.nn.functional.scaled_dot_product_attention(
                    qs, ks, vs, is_causal=True, scale=scale
                )
            )
            continue
        rows = torch.arange(lq, device=qs.device).unsqueeze(1) + (lk - lq)
        cols = torch.arange(lk, device=qs.device).unsqueeze(0)
        allowed = cols <= rows
        if sliding_window:
            allowed &= cols > rows - sliding_window
        scores = (qs @ ks.transpose(-1, -2)).float() * scale
        if softcap:
            scores = softcap * torch.tanh(scores / softcap)
        scores = scores.masked_fill(~allowed, float("-inf"))
        pieces.append((scores.softmax(-1).to(vs.dtype)) @ vs)
    out = torch.cat(pieces, dim=1)  # (heads, N, dim)
    return out.transpose(0, 1).unsqueeze(0), None


def _register_tree_attention_any_device() -> None:
    """TRL calls this at trainer construction. TRL's flash kernel needs CUDA and the
    `kernels` package (which fetches it from the Hub); without either, plain torch."""
    if torch.cuda.is_available() and importlib.util.find_spec("kernels") is not None:
        _original_register()
        return
    AttentionInterface.register(TREE_ATTENTION, tree_attention_torch)
    AttentionMaskInterface.register(TREE_ATTENTION, lambda **kwargs: None)


def _peak_flops_any_device(accelerator: Any, dtype: str) -> float | None:
    """MFU is a GPU number; without CUDA there is no peak to divide by."""
    if getattr(accelerator.device, "type", "cpu") != "cuda":
        return None
    return _original_peak_flops(accelerator, dtype)


_original_register = _trainer_module.register_tree_attention
_original_peak_flops = _trainer_module.get_peak_flops_per_device
_trainer_module.register_tree_attention = _register_tree_attention_any_device
_trainer_module.get_peak_flops_per_device = _peak_flops_any_device


class SampleError(ValueError):
    """A training row TRL cannot train on; `code` says why (counted, never fatal)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


def to_rollout_sample(
    row: TrainingRow, metrics: dict[str, float] | None = None, *, now: float | None = None
) -> RolloutSample:
    """A TrainingRow as TRL's RolloutSample: per-token arrays aligned on `input_ids`
    (TRL reads `old_log_probs[p]` as the generator's log-probability of token p)."""
    n = len(row.input_ids)
    if n == 0:
        raise SampleError("sample.empty", f"group {row.group_id} ({row.task_id}): no tokens")
    if len(row.completion_mask) != n or len(row.old_logprobs) != n:
        raise SampleError(
            "sample.misaligned",
            f"group {row.group_id} ({row.task_id}): {n} tokens, {len(row.completion_mask)} "
            f"mask entries, {len(row.old_logprobs)} logprobs",
        )
    if any(bit not in (0, 1) for bit in row.completion_mask):
        raise SampleError("sample.bad-mask", f"group {row.group_id}: mask entries must be 0 or 1")
    if not any(row.completion_mask[1:]):
        raise SampleError(
            "sample.no-completion", f"group {row.group_id} ({row.task_id}): no generated token"
        )
    if not all(math.isfinite(x) and x <= 0.0 for x in row.old_logprobs):
        raise SampleError(
            "sample.bad-logprob", f"group {row.group_id}: logprobs must be finite and <= 0"
        )
    if not math.isfinite(row.advantage):
        raise SampleError("sample.bad-advantage", f"group {row.group_id}: advantage is not finite")
    return RolloutSample(
        prompt=[],
        completion=[],
        input_ids=np.asarray(row.input_ids, dtype=np.int64),
        completion_mask=np.asarray(row.completion_mask, dtype=np.int64),
        old_log_probs=np.asarray(row.old_logprobs, dtype=np.float32),
        advantage=float(row.advantage),
        model_version=row.model_version,
        group_id=row.group_id,
        metrics=dict(metrics or {}),
        enqueued_at=time.time() if now is None else now,
    )


def lora_config(settings: LoraSettings) -> LoraConfig:
    """peft's LoRA on every linear layer but the head (TRL refuses a LoRA head)."""
    return LoraConfig(
        r=settings.r,
        lora_alpha=settings.alpha,
        lora_dropout=settings.dropout,
        target_modules=settings.target_modules,
        bias="none",
        task_type="CAUSAL_LM",
    )


def grpo_config(
    config: TrainConfig,
    *,
    output_dir: Path,
    server_url: str,
    micro_batch_tokens: int,
    save_steps: int,
    stale_after_s: float,
) -> AsyncGRPOConfig:
    """TRL's config for one harness's trainer (field names as of trl 1.16.0)."""
    cuda = torch.cuda.is_available()
    return AsyncGRPOConfig(
        output_dir=str(output_dir),
        learning_rate=config.learning_rate,
        max_steps=config.steps,
        num_generations=config.rollouts_per_task,
        gradient_accumulation_steps=config.micro_batches_per_step,
        per_device_train_batch_size=1,
        token_budget=micro_batch_tokens,
        max_staleness=config.max_staleness,
        vllm_server_base_url=server_url,
        heartbeat_stale_after_s=stale_after_s,
        save_strategy="steps",
        save_steps=save_steps,
        save_total_limit=2,
        logging_steps=1,
        report_to=[],
        seed=config.seed,
        dtype="bfloat16" if cuda else "float32",
        bf16=cuda,
        use_cpu=not cuda,
        disable_tqdm=True,
    )


def placeholder_dataset() -> Dataset:
    """TRL wants a prompt dataset; prompts come from the tasks, through the worker."""
    return Dataset.from_dict({"prompt": [[{"role": "user", "content": ""}]]})
