"""pi, opencode and Hermes, unmodified, each running a demo task in its container layer
against a real vLLM CPU server through the real guard, one LoRA adapter per harness.

Every byte goes through the real path: harness -> guard (session registered by the
runner, tokens requested upstream) -> vLLM serving the adapter by name -> workspace ->
the task's verifier in a fresh container. The model is random, so the verifier scores 0;
what is checked is that the rollout is scored, its turns carry the adapter's token ids
and logprobs exactly as the guard logged them, and nothing is left running.

The tiny model's context is raised to 128K positions (its RoPE has no learned
positions): under its byte-level tokenizer Hermes' first prompt is about 42K tokens and
Hermes refuses any window under 64K; opencode's is about 23K, pi's about 4K.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import docker
import pytest
from docker.errors import ContainerError

from repo2rlenv.bundle import read_task_dir
from repo2rlenv.bundle.writer import replace_config
from tests.conftest import SCRIPTED_ADAPTER
from tests.guard.upstream import SCRIPTED_COMMAND, SCRIPTED_URL
from tests.tiny import build_adapter
from tests.train.conftest import SHARED_CONTEXT
from train.data.reward import RewardSettings
from train.guard import GuardOptions, GuardServer
from train.harnesses import GuardEndpoint, RunnerOptions, build_runner
from train.harnesses.layer import LAYER_REPO
from train.harnesses.network import ensure_network
from train.harnesses.trial import HOST_ALIAS
from train.rollout.contract import RolloutRequest
from train.serving.server import VllmServer

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.vllm]

REPO = Path(__file__).resolve().parents[2]
HARNESSES = ("pi", "opencode", "hermes")
CONTEXT = SHARED_CONTEXT
AGENT_TIMEOUT_S = 600.0
"""The demo task gives its agent 120 s; Hermes' first prompt alone (42K tokens through a
rank-32 LoRA slot on two shared CPU cores) took 105 s here and over 120 s on the CI
machine, and the test checks the path, not the speed: the copy the harnesses run gets
this much (the test's own timeout is 1,200 s)."""


@pytest.fixture(scope="module")
def harness_task(demo_tasks: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's repair task with room for a slow CPU model (`AGENT_TIMEOUT_S`)."""
    task = tmp_path_factory.mktemp("harness-task") / "example-repair-median"
    shutil.copytree(demo_tasks / "example-repair-median", task)
    config = read_task_dir(task).config
    assert config is not None
    agent = config.agent.model_copy(update={"timeout_sec": AGENT_TIMEOUT_S})
    replace_config(task, config.model_copy(update={"agent": agent}))
    return task


@pytest.fixture(scope="module")
def server(module_lora_server: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> str:
    """The train tests' shared server with one adapter loaded under each harness's name."""
    from train.serving.adapters import AdapterClient

    url, model = module_lora_server
    adapter = build_adapter(model, tmp_path_factory.mktemp("harness-e2e") / "adapter")
    for harness in HARNESSES:
        AdapterClient(url).load(f"{harness}-policy-v1", adapter)
    return url


@contextmanager
def _guard_in_front(upstream: str, log_dir: Path) -> Iterator[GuardEndpoint]:
    """A real guard on the harness network's gateway in front of `upstream`, as the
    trainer starts it (tokens requested upstream), its exchanges logged to `log_dir`."""
    network = ensure_network(docker.from_env())
    options = GuardOptions(
        upstream=upstream, host=network.gateway, port=0, log_dir=log_dir, request_tokens=True
    )
    proxy = GuardServer(options)
    proxy.start_background()
    try:
        yield GuardEndpoint(
            admin_url=proxy.admin_url,
            admin_token=proxy.options.admin_token,
            container_url=f"http://{HOST_ALIAS}:{proxy.port}",
            log_dir=log_dir,
        )
    finally:
        proxy.stop_background()


@pytest.fixture(scope="module")
def guard(server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GuardEndpoint]:
    with _guard_in_front(server, tmp_path_factory.mktemp("guard-logs")) as endpoint:
        yield endpoint


def _exchanges(log_dir: Path, session: str) -> list[dict]:
    lines = (log_dir / session / "exchanges.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("harness", HARNESSES)
def test_real_harness_rollout_is_scored_from_the_guard_log(
    harness: str, guard: GuardEndpoint, harness_task: Path, tmp_path: Path
) -> None:
    adapter = f"{harness}-policy-v1"
    session = f"e2e-{harness}"
    task = harness_task
    runner = build_runner(
        harness,
        guard=guard,
        reward=RewardSettings(),
        work_dir=tmp_path,
        options=RunnerOptions(context_window=CONTEXT, max_tokens=256),
    )
    request = RolloutRequest(
        task_id=task.name,
        task_dir=task,
        harness=harness,
        adapter=adapter,
        model_version=1,
        group_id=0,
        session_id=session,
    )
    rollout = runner(request)

    assert rollout.status == "scored", rollout.error
    assert (rollout.verifier_score, rollout.reward, rollout.blocked_calls) == (0.0, 0.0, 0)
    trial = json.loads((tmp_path / session / "trial.json").read_text())
    assert trial["verifier_exit_code"] == 0 and "FAIL" in trial["verifier_log_tail"]

    exchanges = [e for e in _exchanges(guard.log_dir, session) if e["status"] == 200]
    assert exchanges, "the harness never reached the model through the guard"
    assert {e["model"] for e in exchanges} == {adapter}  # what the harness asked for
    assert {e["upstream_model"] for e in exchanges} == {adapter}  # what vLLM served
    assert {e["response"]["model"] for e in exchanges} == {adapter}
    assert [t.prompt_token_ids for t in rollout.turns] == [e["prompt_token_ids"] for e in exchanges]
    assert [t.completion_token_ids for t in rollout.turns] == [
        e["completion_token_ids"] for e in exchanges
    ]
    for turn in rollout.turns:
        assert turn.model == adapter
        assert len(turn.completion_logprobs) == len(turn.completion_token_ids) > 0
        assert all(v <= 0.0 for v in turn.completion_logprobs)
    verdict = json.loads((guard.log_dir / session / "verdict.json").read_text())
    assert verdict["blocked"] is False

    client = docker.from_env()
    left = client.containers.list(all=True, filters={"label": f"rlenv-harvest.session={session}"})
    assert left == []
    layers = [t for i in client.images.list(LAYER_REPO) for t in i.tags if f":{harness}-" in t]
    assert layers, "no harness layer image"
    task_image = runner.runtime.prepare(read_task_dir(task))
    try:  # the task image itself stays without any harness in it
        client.containers.run(task_image, ["test", "!", "-e", "/opt/rlenv-harness"], remove=True)
    except ContainerError:
        pytest.fail(f"{task_image} holds /opt/rlenv-harness: the task image was changed")


# -- tool calls, counted end to end -------------------------------------------------------
@pytest.fixture(scope="module")
def scripted_guard(
    scripted_server: VllmServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GuardEndpoint]:
    """The guard in front of the session's scripted server (tests/conftest.py), whose
    every answer is one `bash` call of `SCRIPTED_COMMAND`."""
    log_dir = tmp_path_factory.mktemp("scripted-guard")
    with _guard_in_front(scripted_server.base_url, log_dir) as endpoint:
        yield endpoint


@pytest.fixture
def task_naming_the_host(demo_tasks: Path, tmp_path: Path) -> Path:
    """The demo's repair task whose instruction names the host of the scripted call, so
    the guard allows that call turn after turn (`network.unseen-host` otherwise)."""
    task = tmp_path / "task" / "example-repair-median"
    shutil.copytree(demo_tasks / "example-repair-median", task)
    instruction = task / "instruction.md"
    instruction.write_text(instruction.read_text() + f"\nThe data is at {SCRIPTED_URL}.\n")
    return task


def test_pi_tool_calls_are_counted_from_what_it_executed(
    scripted_guard: GuardEndpoint, task_naming_the_host: Path, tmp_path: Path
) -> None:
    """The scripted model answers every turn with the same allowed call, so pi runs it
    turn after turn until the agent timeout stops it."""
    task = task_naming_the_host
    runner = build_runner(
        "pi",
        guard=scripted_guard,
        reward=RewardSettings(),
        work_dir=tmp_path,
        agent_timeout_s=40,
        options=RunnerOptions(context_window=16384, max_tokens=64),
    )
    request = RolloutRequest(
        task_id=task.name,
        task_dir=task,
        harness="pi",
        adapter=SCRIPTED_ADAPTER,
        model_version=7,
        group_id=3,
        session_id="e2e-pi-tools",
    )
    rollout = runner(request)

    assert rollout.status == "scored", rollout.error  # a timed-out agent is still verified
    assert rollout.verifier_score == 0.0 and rollout.blocked_calls == 0
    exchanges = [
        e for e in _exchanges(scripted_guard.log_dir, "e2e-pi-tools") if e["status"] == 200
    ]
    calls = [
        c for e in exchanges for choice in e["response"]["choices"]
        for c in (choice.get("message") or choice).get("tool_calls") or []
    ]  # fmt: skip
    assert len(calls) >= 2
    scripted = {"command": SCRIPTED_COMMAND}  # the guard's log: name and arguments per call
    assert all(json.loads(c["arguments"]) == scripted for c in calls), calls
    # pi executed each call it received, except at most the one the timeout cut short.
    assert len(calls) - 1 <= rollout.tool_calls <= len(calls)
    assert rollout.tool_calls >= 2
    assert len(rollout.turns) == len(exchanges)
