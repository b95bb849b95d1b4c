"""The real evaluation: one vLLM server (started here, or given), the guard in front of
it, the harness runner (train.harnesses) and the server's adapter slots over HTTP.

Everything that needs the serving or harness code is imported here and only here, when
a real run starts, so planning, reports and tests of the orchestration never need it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from train.evaluate.evaluator import Evaluator, RunnerFactory, RunSummary, planned_in_ledger
from train.evaluate.ledger import Attempt, Ledger
from train.evaluate.plan import EvalPlan


class LiveUnavailable(RuntimeError):
    """What a real run needs is missing; the message starts with a reason code."""


class LiveOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server_url: str | None = Field(default=None, description="A running vLLM server (LoRA on).")
    base_model: Path | None = Field(default=None, description="Model folder to serve instead.")
    served_model_name: str = "base"
    slots: int = Field(default=4, ge=1)
    max_lora_rank: int = Field(default=32, ge=1)
    max_model_len: int = Field(default=16384, ge=256)
    max_tokens: int = Field(default=1024, ge=1, description="Per model call of the harness.")
    jobs: int = Field(default=4, ge=1)
    retries: int = Field(default=1, ge=0)
    work_dir: Path = Path("tasks_out/eval")
    agent_timeout_s: float | None = None
    runtime: str = Field(default="docker", description="Where the harness trials run.")
    harbor_python: Path | None = None


def lora_server_args(options: LiveOptions) -> tuple[list[str], dict[str, str]]:
    """vLLM flags and environment for runtime adapter loading with `slots` adapters."""
    args = ["--enable-lora", "--max-loras", str(options.slots)]
    args += ["--max-lora-rank", str(options.max_lora_rank)]
    return args, {"VLLM_ALLOW_RUNTIME_LORA_UPDATING": "1"}


@contextmanager
def served(options: LiveOptions) -> Iterator[str]:
    """Base URL of the vLLM server: the given one, or one started for this run."""
    if options.server_url:
        yield options.server_url.rstrip("/")
        return
    if options.base_model is None:
        raise LiveUnavailable("eval.no-server: give --server-url or --base-model DIR")
    from train.serving.install import is_installed
    from train.serving.server import ServerError, ServerOptions, VllmServer

    if not is_installed():
        raise LiveUnavailable(
            "eval.no-vllm: the vLLM virtualenv is missing; run `python -m train.serving.install`"
        )
    extra_args, extra_env = lora_server_args(options)
    server = VllmServer(
        ServerOptions(
            model=options.base_model,
            served_model_name=options.served_model_name,
            max_model_len=options.max_model_len,
            extra_args=extra_args,
            extra_env=extra_env,
            log_path=options.work_dir / "vllm.log",
        )
    )
    options.work_dir.mkdir(parents=True, exist_ok=True)
    try:
        server.start()
    except ServerError as exc:
        raise LiveUnavailable(f"eval.server-failed: {exc}") from exc
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()


@contextmanager
def runner_factory(plan: EvalPlan, upstream: str, options: LiveOptions) -> Iterator[RunnerFactory]:
    """The guard in front of `upstream`, and the harness runner behind a factory: one
    runner serves every model, since each request names its model (adapter)."""
    try:
        from train.harnesses import GuardEndpoint, RunnerOptions, build_runner
        from train.harnesses.runtimes import owned_runtime
        from train.harnesses.trial import HOST_ALIAS
    except ImportError as exc:
        raise LiveUnavailable(
            f"eval.harness-unavailable: the harness runner (train.harnesses) is missing: {exc}"
        ) from exc
    from train.data.reward import RewardSettings
    from train.guard import GuardOptions, GuardServer

    log_dir = options.work_dir / "guard"
    # On every address, so harness containers reach it through the network's gateway;
    # vLLM stays on loopback, out of their reach: the guard is the only road to the model.
    # Token ids on: the harness runner builds each rollout's turns from them.
    guard = GuardServer(
        GuardOptions(
            upstream=upstream,
            host="0.0.0.0",
            port=0,
            log_dir=log_dir,
            request_tokens=True,
            require_registered=True,
        )
    )
    guard.start_background()
    try:
        endpoint = GuardEndpoint(
            admin_url=guard.admin_url,
            admin_token=guard.options.admin_token,
            container_url=f"http://{HOST_ALIAS}:{guard.port}",
            log_dir=log_dir,
        )
        runner = build_runner(
            plan.harness,
            guard=endpoint,
            reward=RewardSettings(),
            work_dir=options.work_dir / "rollouts",
            agent_timeout_s=options.agent_timeout_s,
            options=RunnerOptions(
                context_window=options.max_model_len, max_tokens=options.max_tokens
            ),
            runtime=owned_runtime(options.runtime, options.harbor_python),
        )
        yield lambda _model: runner
    finally:
        guard.stop_background()


def evaluate_live(
    plan: EvalPlan,
    ledger: Ledger,
    options: LiveOptions,
    on_attempt: Callable[[Attempt], None] | None = None,
) -> RunSummary:
    try:
        from train.serving.adapters import AdapterClient, AdapterError
    except ImportError as exc:
        raise LiveUnavailable(f"eval.adapters-missing: {exc}") from exc
    resumed = planned_in_ledger(plan, ledger.load())
    if resumed == plan.total_attempts:
        return RunSummary(resumed=resumed)  # nothing to run: no server, no guard
    with served(options) as base_url:
        slots = AdapterClient(base_url)
        try:
            slots.loaded()
        except AdapterError as exc:
            raise LiveUnavailable(f"eval.server-unusable: {exc}") from exc
        with runner_factory(plan, base_url, options) as factory:
            evaluator = Evaluator(
                slots,
                factory,
                plan,
                ledger,
                jobs=options.jobs,
                retries=options.retries,
                on_attempt=on_attempt,
            )
            return evaluator.run()
