"""The trainer's pieces without a server: adapter names and the unload window, the
TrainingRow -> RolloutSample conversion, the plan batcher, checkpoint state, the rollout
worker's packing and health, and the plain-torch tree attention used on CPU."""

from __future__ import annotations

import json
import queue
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.train.rollout_fakes import group
from train.grpo.trainer import (
    HarnessTrainer,
    PlanBatcher,
    TrainerSetupError,
    adapter_version,
    latest_checkpoint,
    read_rollout_state,
    stale_adapters,
    unload_stale,
)
from train.grpo.trl_compat import (
    TREE_ATTENTION,
    SampleError,
    TreeRow,
    to_rollout_sample,
    tree_attention_torch,
)
from train.grpo.worker import (
    PLAN_LAST,
    PLAN_MICRO_BATCH,
    PLAN_STEP,
    RolloutWorker,
    WorkerError,
    WorkerSettings,
)
from train.rollout.contract import Group, TrainingRow
from train.serving.adapters import AdapterError


def _row(n: int = 6, generated: int = 3, advantage: float = 0.5, group_id: int = 1) -> TrainingRow:
    prompt = n - generated
    return TrainingRow(
        input_ids=list(range(10, 10 + n)),
        completion_mask=[0] * prompt + [1] * generated,
        old_logprobs=[0.0] * prompt + [-0.5 - i for i in range(generated)],
        advantage=advantage,
        model_version=3,
        group_id=group_id,
        task_id="t",
    )


# -- adapter names and the unload window -------------------------------------------------
def test_adapter_version_reads_only_this_harness() -> None:
    assert adapter_version("pi-policy-v12", "pi") == 12
    assert adapter_version("opencode-policy-v3", "pi") is None
    assert adapter_version("pi2-policy-v3", "pi") is None
    assert adapter_version("pi-policy-v3-extra", "pi") is None
    assert adapter_version("tiny", "pi") is None


def test_stale_window_keeps_max_staleness_plus_one_versions() -> None:
    loaded = [f"pi-policy-v{v}" for v in range(1, 7)] + ["opencode-policy-v1", "tiny"]
    assert stale_adapters(loaded, "pi", 6, 2) == ["pi-policy-v1", "pi-policy-v2", "pi-policy-v3"]
    assert stale_adapters(loaded, "pi", 6, 0) == [f"pi-policy-v{v}" for v in range(1, 6)]
    assert stale_adapters(loaded, "opencode", 6, 2) == ["opencode-policy-v1"]
    assert stale_adapters(loaded, "pi", 2, 4) == []


class _Slots:
    def __init__(self, names: list[str], gone: set[str] | None = None) -> None:
        self.names = list(names)
        self.gone = gone or set()
        self.unloaded: list[str] = []

    def load(self, name: str, path: Path) -> None:
        self.names.append(name)

    def unload(self, name: str) -> None:
        if name in self.gone:
            raise AdapterError("adapter.not-loaded", name)
        self.unloaded.append(name)
        self.names.remove(name)

    def loaded(self) -> list[str]:
        return list(self.names)


def test_unload_stale_touches_only_own_old_versions_and_tolerates_missing() -> None:
    slots = _Slots(
        ["pi-policy-v1", "pi-policy-v2", "pi-policy-v3", "hermes-policy-v1"], gone={"pi-policy-v1"}
    )
    assert unload_stale(slots, "pi", 4, 1) == ["pi-policy-v1", "pi-policy-v2"]
    assert slots.unloaded == ["pi-policy-v2"]
    assert "hermes-policy-v1" in slots.loaded()


def test_unload_stale_raises_other_adapter_errors() -> None:
    class Broken(_Slots):
        def unload(self, name: str) -> None:
            raise AdapterError("adapter.unreachable", "down")

    with pytest.raises(AdapterError, match="unreachable"):
        unload_stale(Broken(["pi-policy-v1"]), "pi", 5, 1)


# -- TrainingRow -> RolloutSample ----------------------------------------------------------
def test_row_becomes_aligned_rollout_sample() -> None:
    row = _row()
    sample = to_rollout_sample(row, {"plan/step": 2.0}, now=123.0)
    assert sample.input_ids.dtype == np.int64 and sample.input_ids.tolist() == row.input_ids
    assert sample.completion_mask.tolist() == row.completion_mask
    assert sample.old_log_probs.dtype == np.float32
    assert np.allclose(sample.old_log_probs, row.old_logprobs)
    assert (sample.advantage, sample.model_version, sample.group_id) == (0.5, 3, 1)
    assert sample.metrics == {"plan/step": 2.0} and sample.enqueued_at == 123.0


@pytest.mark.parametrize(
    ("update", "code"),
    [
        ({"completion_mask": [0, 0, 0, 1, 1]}, "sample.misaligned"),
        ({"completion_mask": [1, 0, 0, 0, 0, 0]}, "sample.no-completion"),
        ({"completion_mask": [0, 0, 0, 2, 1, 1]}, "sample.bad-mask"),
        ({"old_logprobs": [0.0, 0.0, 0.0, -1.0, float("nan"), -1.0]}, "sample.bad-logprob"),
        ({"old_logprobs": [0.0, 0.0, 0.0, -1.0, 0.5, -1.0]}, "sample.bad-logprob"),
        ({"advantage": float("inf")}, "sample.bad-advantage"),
        ({"input_ids": [], "completion_mask": [], "old_logprobs": []}, "sample.empty"),
    ],
)
def test_bad_rows_are_refused_with_a_code(update: dict, code: str) -> None:
    row = _row().model_copy(update=update)
    with pytest.raises(SampleError) as info:
        to_rollout_sample(row)
    assert info.value.code == code


# -- the plan batcher ------------------------------------------------------------------
def _marked(step: int, mb: int, last: bool, group_id: int = 0) -> dict:
    sample = to_rollout_sample(
        _row(group_id=group_id),
        {PLAN_STEP: float(step), PLAN_MICRO_BATCH: float(mb), PLAN_LAST: float(last), "r": 1.0},
    )
    return {
        "input_ids": sample.input_ids,
        "completion_mask": sample.completion_mask,
        "old_log_probs": sample.old_log_probs,
        "advantage": sample.advantage,
        "group_id": sample.group_id,
        "metrics": sample.metrics,
    }


def test_plan_batcher_keeps_the_workers_micro_batches() -> None:
    stream = [
        _marked(0, 0, False),
        _marked(0, 0, True),
        _marked(0, 1, True),
        _marked(1, 0, False),  # its last mark was dropped (stale): the key change closes it
        _marked(1, 1, False),
        _marked(1, 1, True),
    ]
    batcher = PlanBatcher(stream)
    out = []
    iterator = iter(batcher)
    for _ in range(4):
        out.append(next(iterator))
    sizes = [len(rows[0].samples) for rows in out]
    assert sizes == [2, 1, 1, 2]
    assert all(isinstance(rows[0], TreeRow) and len(rows) == 1 for rows in out)
    assert out[0][0].samples[0]["metrics"] == {"r": 1.0}  # plan marks never reach the logs
    plans, wait = batcher.take()
    assert plans == [0, 1] and wait >= 0.0
    assert batcher.take()[0] == []


# -- the server's capability -------------------------------------------------------------
class _Client:
    def __init__(self, answer: object) -> None:
        self.answer = answer

    def wait_for_server_ready(self) -> None:
        pass

    def get_server_info(self) -> object:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_a_server_whose_capability_cannot_be_read_is_refused_not_assumed() -> None:
    """TRL's fallback would overwrite the shared base weights: a /server_info that does
    not answer (no VLLM_SERVER_DEV_MODE, a proxy, an outage) is a refusal, never True."""
    from types import SimpleNamespace

    from peft import LoraConfig

    # A plain LoRA model: what the old fallback validated before answering True.
    model = SimpleNamespace(active_adapters=["a"], peft_config={"a": LoraConfig(r=8)})
    args = SimpleNamespace(vllm_server_base_url="http://127.0.0.1:9", max_staleness=1)
    for answer in (ConnectionError("refused"), {"model_config": {}}):
        trainer = SimpleNamespace(vllm_client=_Client(answer), args=args)
        with pytest.raises(TrainerSetupError) as info:
            HarnessTrainer._init_lora_sync(trainer, model)  # type: ignore[arg-type]
        assert info.value.code == "trainer.server-capability-unknown"


# -- checkpoint state --------------------------------------------------------------------
def test_rollout_state_round_trip_and_refusals(tmp_path: Path) -> None:
    for step, version in ((1, 2), (3, 4)):
        folder = tmp_path / f"checkpoint-{step}"
        folder.mkdir()
        (folder / "rollout_state.json").write_text(
            json.dumps({"model_version": version, "harness": "pi"})
        )
    (tmp_path / "checkpoint-9").mkdir()  # no state: not a usable checkpoint
    latest = latest_checkpoint(tmp_path)
    assert latest == tmp_path / "checkpoint-3"
    assert read_rollout_state(latest, "pi") == 4
    with pytest.raises(TrainerSetupError, match="belongs to harness 'pi'"):
        read_rollout_state(latest, "opencode")
    with pytest.raises(TrainerSetupError, match="bad-checkpoint"):
        read_rollout_state(tmp_path / "checkpoint-9", "pi")
    assert latest_checkpoint(tmp_path / "none") is None


# -- the rollout worker --------------------------------------------------------------------
class _Source:
    """A GroupSource double: hands out the given groups, then nothing."""

    def __init__(self, groups: list[Group], fail: Exception | None = None) -> None:
        self.groups = list(groups)
        self.fail = fail
        self.versions: list[int] = []
        self.started = self.stopped = False
        self.lock = threading.Lock()

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.stopped = True

    def set_version(self, version: int) -> None:
        self.versions.append(version)

    def next_group(self, timeout: float | None = None) -> Group | None:
        if self.fail is not None:
            raise self.fail
        with self.lock:
            if self.groups:
                return self.groups.pop(0)
        threading.Event().wait(min(timeout or 0.01, 0.01))
        return None


def _drain(worker: RolloutWorker) -> list:
    out = []
    while True:
        try:
            out.append(worker.rollout_buffer.get_nowait())
        except queue.Empty:
            return out


def _outcomes(scores: list[float]) -> list[tuple[str, float, int]]:
    return [("scored", s, 0) for s in scores]


def test_worker_packs_steps_within_budget_and_marks_micro_batches() -> None:
    groups = [group(_outcomes([1.0, 0.0, 0.5, 0.0]), group_id=g) for g in range(3)]
    settings = WorkerSettings(micro_batches=2, token_budget=90, max_staleness=2)
    worker = RolloutWorker(_Source([]), settings, to_rollout_sample)
    for g in groups:
        worker.take(g)
    summary = worker.flush(room=True)
    assert summary is not None and summary.rows > 0
    samples = _drain(worker)
    batches: dict[int, list] = {}
    for s in samples:
        assert s.metrics[PLAN_STEP] == 0.0
        batches.setdefault(int(s.metrics[PLAN_MICRO_BATCH]), []).append(s)
    assert sorted(batches) == [0, 1]
    for batch in batches.values():
        assert sum(len(s.input_ids) for s in batch) <= 90
        assert [s.metrics[PLAN_LAST] for s in batch] == [0.0] * (len(batch) - 1) + [1.0]
    assert summary.tokens == sum(len(s.input_ids) for s in samples)
    assert 0.0 < summary.budget_utilisation <= 1.0
    assert worker.summaries[0] is summary
    assert {g.group_id for g in summary.groups} <= {0, 1, 2}


def test_worker_waits_for_a_full_step_unless_starving() -> None:
    settings = WorkerSettings(micro_batches=4, token_budget=1000, max_staleness=2)
    worker = RolloutWorker(_Source([]), settings, to_rollout_sample)
    worker.take(group(_outcomes([1.0, 0.0]), group_id=0))
    assert worker.flush(room=True, starving=False) is None
    summary = worker.flush(room=True, starving=True)
    assert summary is not None
    samples = _drain(worker)
    # two real rows spread over four micro-batches plus two zero-advantage fillers
    assert sorted({int(s.metrics[PLAN_MICRO_BATCH]) for s in samples}) == [0, 1, 2, 3]
    fillers = [s for s in samples if s.advantage == 0.0]
    assert len(fillers) == 2 and summary.rows == 2


def test_worker_skips_groups_without_signal_and_counts_them() -> None:
    worker = RolloutWorker(_Source([]), WorkerSettings(micro_batches=1), to_rollout_sample)
    worker.take(group(_outcomes([0.0, 0.0, 0.0]), group_id=0))
    worker.take(group([("unscorable", 0.0, 0), ("scored", 1.0, 0)], group_id=1))
    assert worker.flush(room=True, starving=True) is None
    assert worker.skipped["group.zero-variance"] == 1
    assert worker.skipped["group.too-few-scored"] == 1


def test_worker_drops_groups_gone_stale_before_packing() -> None:
    settings = WorkerSettings(micro_batches=1, token_budget=1000, max_staleness=1)
    source = _Source([])
    worker = RolloutWorker(source, settings, to_rollout_sample)
    worker.take(group(_outcomes([1.0, 0.0]), group_id=0, version=0))
    worker.update_model_version(2)
    assert source.versions == [2]
    assert worker.flush(room=True, starving=True) is None
    worker.take(group(_outcomes([1.0, 0.0]), group_id=1, version=2))
    summary = worker.flush(room=True, starving=True)
    assert summary is not None and summary.dropped_stale_groups == 1


def test_worker_thread_delivers_and_reports_health() -> None:
    groups = [group(_outcomes([1.0, 0.0]), group_id=g) for g in range(2)]
    source = _Source(groups)
    settings = WorkerSettings(micro_batches=1, token_budget=1000, poll_s=0.01, starve_s=0.0)
    worker = RolloutWorker(source, settings, to_rollout_sample)
    worker.start()
    try:
        first = worker.rollout_buffer.get(timeout=30)
        assert first.group_id in (0, 1)
        worker.check_health(stale_after_s=3600)
        assert source.started
    finally:
        worker.stop()
    assert source.stopped
    worker.check_health(stale_after_s=3600)  # stopped on purpose: not an error


def test_worker_health_reports_a_dead_thread() -> None:
    source = _Source([], fail=RuntimeError("scheduler exploded"))
    worker = RolloutWorker(source, WorkerSettings(poll_s=0.01), to_rollout_sample)
    worker.start()
    worker._thread.join(timeout=30)
    with pytest.raises(WorkerError, match=r"worker\.died: RuntimeError: scheduler exploded"):
        worker.check_health(stale_after_s=3600)
    worker.stop()


def test_worker_health_reports_a_stall_with_the_skip_reasons() -> None:
    worker = RolloutWorker(_Source([]), WorkerSettings(poll_s=0.01), to_rollout_sample)
    with pytest.raises(WorkerError, match=r"worker\.stopped"):
        worker.check_health(stale_after_s=3600)  # never started
    worker.start()
    try:
        worker.take(group(_outcomes([0.0, 0.0]), group_id=0))
        with pytest.raises(WorkerError, match=r"worker.stalled.*group.zero-variance: 1"):
            worker.check_health(stale_after_s=0.0)
    finally:
        worker.stop()


# -- tree attention in plain torch ---------------------------------------------------------
def test_torch_tree_attention_matches_per_sample_causal_attention() -> None:
    """Two samples sharing a prefix, packed as TRL packs them: each token's logits under
    the plain-torch tree attention equal an ordinary causal forward of its own sample."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from train.grpo.trl_compat import _register_tree_attention_any_device

    _register_tree_attention_any_device()
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=64, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        max_position_embeddings=128,
    )  # fmt: skip
    model = Qwen2ForCausalLM(config).eval()
    a = [1, 2, 3, 4, 5, 6, 7]
    b = [1, 2, 3, 4, 9, 10]
    row = TreeRow()
    for ids, gid in ((a, 0), (b, 0)):
        row.add(
            {
                "input_ids": torch.tensor(ids),
                "completion_mask": torch.tensor([0] * 4 + [1] * (len(ids) - 4)),
                "old_log_probs": torch.zeros(len(ids)),
                "advantage": 1.0,
                "group_id": gid,
            }
        )
    packed = row.pack()
    assert len(packed["input_ids"]) < len(a) + len(b)  # the prefix is shared
    model.config._attn_implementation = TREE_ATTENTION
    with torch.no_grad():
        tree = model(
            input_ids=packed["input_ids"].unsqueeze(0),
            position_ids=packed["position_ids"].unsqueeze(0),
            tree_kv_index=packed["tree_kv_index"],
            tree_cu_seqlens_q=packed["tree_cu_seqlens_q"],
            tree_cu_seqlens_k=packed["tree_cu_seqlens_k"],
            tree_max_seqlen_q=int(packed["tree_max_seqlens"][0]),
            tree_max_seqlen_k=int(packed["tree_max_seqlens"][1]),
        ).logits[0]
        model.config._attn_implementation = "eager"
        for ids, nodes in zip((a, b), row.sample_nodes, strict=True):
            plain = model(input_ids=torch.tensor([ids])).logits[0]
            layout = _packed_positions(row, nodes)
            assert torch.allclose(tree[layout], plain, atol=1e-5), ids


def _packed_positions(row: TreeRow, nodes: list[int]) -> list[int]:
    """Packed index of each node, re-derived the way TreeRow.pack lays the trie out."""
    order: list[int] = []
    stack = list(reversed(row.roots.values()))
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(reversed(row.children[node].values()))
    where = {node: i for i, node in enumerate(order)}
    return [where[n] for n in nodes]


def test_torch_tree_attention_handles_grouped_heads_and_windows() -> None:
    torch.manual_seed(1)
    q = torch.randn(1, 4, 5, 8)
    k = torch.randn(1, 2, 5, 8)
    v = torch.randn(1, 2, 5, 8)
    index = torch.arange(5)
    cu = torch.tensor([0, 5], dtype=torch.int32)
    out, _ = tree_attention_torch(
        None, q, k, v, None, tree_kv_index=index, tree_cu_seqlens_q=cu, tree_cu_seqlens_k=cu
    )
    expected = torch.nn.functional.scaled_dot_product_attention(
        q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), is_causal=True
    )
    assert out.shape == (1, 5, 4, 8)
    assert torch.allclose(out, expected.transpose(1, 2), atol=1e-5)
    windowed, _ = tree_attention_torch(
        None, q, k, v, None, tree_kv_index=index, tree_cu_seqlens_q=cu,
        tree_cu_seqlens_k=cu, sliding_window=1,
    )  # fmt: skip
    assert torch.allclose(windowed[0, :, 0], v.repeat_interleave(2, 1)[0, 0], atol=1e-5)


def test_smoke_baseline_trains_zero_variance_groups_only_when_set() -> None:
    zero = group(_outcomes([0.0, 0.0]), group_id=0)
    plain = RolloutWorker(_Source([]), WorkerSettings(micro_batches=1), to_rollout_sample)
    plain.take(zero)
    assert plain.flush(room=True, starving=True) is None
    smoke = RolloutWorker(
        _Source([]), WorkerSettings(micro_batches=1, smoke_baseline=0.5), to_rollout_sample
    )
    smoke.take(zero)
    assert smoke.skipped["group.smoke-baseline"] == 1
    assert smoke.flush(room=True, starving=True) is not None
    assert {s.advantage for s in _drain(smoke)} == {-0.5}


def test_another_trl_release_is_refused_naming_the_pin(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    from train.grpo import trl_compat

    monkeypatch.setattr(importlib.metadata, "version", lambda name: "1.18.0")
    with pytest.raises(trl_compat.TrlVersionError, match=r"trl 1\.18\.0 .*trl==1\.16\.0"):
        trl_compat._check_version()

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    with pytest.raises(trl_compat.TrlVersionError, match=r"not installed.*trl==1\.16\.0"):
        trl_compat._check_version()
