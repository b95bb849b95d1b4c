"""The pure parts of the runtime and of `validate`: reward parsing, archive hand-over,
the verdict over a set of trial results, and the trial loop against a fake runtime
(trials not run, trials skipped after a refusal)."""

import io
import tarfile
import time
import zipfile

import pytest

from repo2rlenv.bundle import read_task_dir
from repo2rlenv.runtime import EngineError, TrialResult
from repo2rlenv.runtime.archive import (
    FILE_MTIME,
    RewardError,
    pack,
    pack_at_root,
    parse_reward,
    read_files,
    sanitize,
)
from repo2rlenv.runtime.images import ImageBuildError, build_context
from repo2rlenv.validate import ResultCache
from repo2rlenv.validate.dynamic import judge, plan, run_dynamic
from repo2rlenv.validate.findings import Finding
from repo2rlenv.validate.image_leaks import LABEL as LEAK_LABEL
from repo2rlenv.validate.probes import PROBES
from repo2rlenv.validate.report import TaskReport


@pytest.mark.parametrize(
    ("files", "headline", "rewards"),
    [
        ({"reward.txt": b"1\n"}, 1.0, {"reward": 1.0}),
        ({"reward.txt": b" 0.25 "}, 0.25, {"reward": 0.25}),
        ({"reward.json": b'{"reward": 0.5, "style": 1}'}, 0.5, {"reward": 0.5, "style": 1.0}),
        ({"reward.json": b'{"a": 0, "b": 1}'}, 0.5, {"a": 0.0, "b": 1.0}),
        ({"reward.json": b'{"reward": 1}', "reward.txt": b"0"}, 1.0, {"reward": 1.0}),
    ],
)
def test_parse_reward(files, headline, rewards):
    assert parse_reward(files) == (headline, rewards)


@pytest.mark.parametrize(
    ("files", "status"),
    [
        ({}, "reward-missing"),
        ({"test-stdout.txt": b"ok"}, "reward-missing"),
        ({"reward.txt": b""}, "reward-invalid"),
        ({"reward.txt": b"pass"}, "reward-invalid"),
        ({"reward.txt": b"2.5"}, "reward-invalid"),
        ({"reward.txt": b"-0.1"}, "reward-invalid"),
        ({"reward.txt": b"nan"}, "reward-invalid"),
        ({"reward.json": b"[1]"}, "reward-invalid"),
        ({"reward.json": b'{"reward": "1"}'}, "reward-invalid"),
        ({"reward.json": b'{"reward": true}'}, "reward-invalid"),
        ({"reward.json": b"{}"}, "reward-invalid"),
    ],
)
def test_parse_reward_rejects(files, status):
    with pytest.raises(RewardError) as caught:
        parse_reward(files)
    assert caught.value.status == status


def _archive(members: list[tarfile.TarInfo], data: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for member in members:
            payload = data.get(member.name)
            if payload is not None:
                member.size = len(payload)
            tar.addfile(member, io.BytesIO(payload) if payload is not None else None)
    return buffer.getvalue()


def _info(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", mode: int = 0o644):
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, mode
    return info


def test_sanitize_keeps_the_workspace_and_drops_escapes():
    raw = _archive(
        [
            _info("workspace", tarfile.DIRTYPE, mode=0o755),
            _info("workspace/a.py", mode=0o4755),
            _info("workspace/inner", tarfile.SYMTYPE, "a.py"),
            _info("workspace/up", tarfile.SYMTYPE, "../etc/passwd"),
            _info("workspace/abs", tarfile.SYMTYPE, "/etc/shadow"),
            _info("workspace/fifo", tarfile.FIFOTYPE),
            _info("workspace/dev", tarfile.CHRTYPE),
            _info("workspace/hard", tarfile.LNKTYPE, "workspace/a.py"),
        ],
        {"workspace/a.py": b"print(1)"},
    )
    clean, dropped = sanitize([raw[:100], raw[100:]])
    with tarfile.open(fileobj=io.BytesIO(clean)) as tar:
        kept = {m.name: m for m in tar.getmembers()}
    assert set(kept) == {"workspace", "workspace/a.py", "workspace/inner"}
    assert kept["workspace/a.py"].mode == 0o755
    assert set(dropped) == {
        "workspace/up",
        "workspace/abs",
        "workspace/fifo",
        "workspace/dev",
        "workspace/hard",
    }


def test_pack_round_trip_with_modes():
    data = pack({"test.sh": (b"#!/bin/bash\n", True), "deep/x/y.txt": (b"y", False)}, "tests")
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        modes = {m.name: m.mode for m in tar.getmembers()}
    assert modes == {
        "tests": 0o755,
        "tests/test.sh": 0o755,
        "tests/deep": 0o755,
        "tests/deep/x": 0o755,
        "tests/deep/x/y.txt": 0o644,
    }
    assert read_files([data]) == {"test.sh": b"#!/bin/bash\n", "deep/x/y.txt": b"y"}


def trial(label: str, reward: float | None = None, status: str = "ok", detail: str = ""):
    return TrialResult(label=label, status=status, reward=reward, detail=detail)


def rules_of(trials):
    return sorted(f.rule_id for f in judge(trials))


@pytest.mark.parametrize(
    ("trials", "expected"),
    [
        (
            [
                trial("reference", 1.0),
                trial("noop", 0.0),
                trial("reference-rerun-1", 1.0),
                trial("noop-rerun-1", 0.0),
            ],
            [],
        ),
        ([trial("reference", 0.0), trial("noop", 0.0)], ["run.reference-failed"]),
        ([trial("reference", 0.5), trial("noop", 0.0)], ["run.reference-failed"]),
        ([trial("reference", 1.0), trial("noop", 1.0)], ["run.noop-passed"]),
        (
            [
                trial("reference", 1.0),
                trial("noop", 0.0),
                trial("reference-rerun-1", 0.0),
                trial("noop-rerun-1", 0.0),
            ],
            ["run.flaky", "run.reference-failed"],
        ),
        (
            [
                trial("reference", 1.0),
                trial("noop", 0.0),
                trial("reference-rerun-1", 1.0),
                trial("noop-rerun-1", 1.0),
            ],
            ["run.flaky", "run.noop-passed"],
        ),
        (
            [trial("reference", status="reward-missing"), trial("noop", status="reward-missing")],
            ["run.reward-missing"],
        ),
        (
            [trial("reference", status="verifier-timeout"), trial("noop", 0.0)],
            ["run.verifier-timeout"],
        ),
        (
            [
                trial("reference", status="reward-invalid"),
                trial("noop", 0.0),
                trial("reference-rerun-1", 1.0),
                trial("noop-rerun-1", 0.0),
            ],
            ["run.flaky", "run.reward-invalid"],
        ),
    ],
)
def test_judge(trials, expected):
    assert rules_of(trials) == expected


def test_plan_pairs_reference_and_noop_reruns():
    labels = [r.label for r in plan(2)]
    assert labels == [
        "reference",
        "noop",
        "reference-rerun-1",
        "noop-rerun-1",
        "reference-rerun-2",
        "noop-rerun-2",
    ]
    assert [r.apply_solution for r in plan(1)] == [True, False, True, False]


# -- trials that did not run, and trials skipped after a refusal ------------------------

PROBE_LABELS = list(PROBES)


def _sound(reruns: int = 0) -> list[TrialResult]:
    trials = [trial("reference", 1.0), trial("noop", 0.0)]
    for index in range(1, reruns + 1):
        trials += [trial(f"reference-rerun-{index}", 1.0), trial(f"noop-rerun-{index}", 0.0)]
    return trials


def _report(trials: list[TrialResult]) -> TaskReport:
    return TaskReport(
        path="t", task_id="t", findings=judge(trials), trials=trials, dynamic_ran=bool(trials)
    )


def test_a_probe_that_did_not_run_is_infrastructure_never_held():
    """The forgery was never tried: not `passed`, not verified, counted as not run."""
    probes = [trial(label, 0.0) for label in PROBE_LABELS[1:]]
    lost = trial(PROBE_LABELS[0], status="error", detail="docker: connection refused")
    report = _report([*_sound(), lost, *probes])
    assert [f.rule_id for f in report.findings] == ["run.error"]
    assert "probe 1" in report.findings[0].message
    assert report.derive_label().status == "unverified"  # not verified, nothing to repair
    outcomes = {o.rule_id: o.status for o in report.check_outcomes()}
    assert outcomes[PROBE_LABELS[0]] == "error"
    assert all(outcomes[label] == "passed" for label in PROBE_LABELS[1:])
    assert outcomes["reference"] == outcomes["noop"] == "passed"


def test_a_leak_scan_or_rerun_that_did_not_run_is_infrastructure():
    scan = trial(LEAK_LABEL, status="error", detail="engine gone")
    assert rules_of([*_sound(), scan]) == ["run.error"]  # was a warning only
    lost = trial("reference-rerun-1", status="error", detail="engine gone")
    # an infrastructure error is no disagreement between runs: not `run.flaky`
    assert rules_of([*_sound(), lost, trial("noop-rerun-1", 0.0)]) == ["run.error"]
    report = _report([*_sound(), lost, trial("noop-rerun-1", 0.0)])
    outcomes = {o.rule_id: o.status for o in report.check_outcomes()}
    assert (outcomes["reference"], outcomes["noop"]) == ("error", "passed")


def test_a_task_failure_and_trials_not_run_are_both_named_the_tasks_first():
    trials = [trial("reference", 0.0), trial("noop", status="error", detail="gone")]
    report = _report(trials)
    assert [f.rule_id for f in report.errors] == ["run.reference-failed", "run.error"]
    assert report.derive_label().status == "needs_repair"


class CountingRuntime:
    """Answers each trial from `outcomes` (label -> (status, reward)); everything else
    is a sound task's answer. Counts the trials it was asked to run."""

    name = "fake"

    def __init__(self, outcomes=None, prepare_error: Exception | None = None) -> None:
        self.outcomes = outcomes or {}
        self.prepare_error = prepare_error
        self.calls: list[str] = []

    def environment_key(self, task) -> str:
        return "fake"

    def prepare(self, task) -> str:
        if self.prepare_error is not None:
            raise self.prepare_error
        return "image"

    def run_trial(self, task, image, request) -> TrialResult:
        self.calls.append(request.label)
        default = ("ok", 1.0 if request.apply_solution else 0.0)
        status, reward = self.outcomes.get(request.label, default)
        return TrialResult(label=request.label, status=status, reward=reward)


@pytest.fixture
def tree(examples_dir):
    return read_task_dir(examples_dir / "example-repair-median")


def _probes(tree) -> list[str]:
    """The probes planted on this task (a pytest task: not the JavaScript runners')."""
    return [rule for rule, probe in PROBES.items() if probe.applies is None or probe.applies(tree)]


@pytest.mark.parametrize(
    ("outcomes", "ran", "rule"),
    [
        ({"reference": ("verifier-timeout", None)}, 1, "run.verifier-timeout"),
        ({"reference": ("ok", 0.0)}, 1, "run.reference-failed"),
        ({"noop": ("verifier-timeout", None)}, 2, "run.verifier-timeout"),
        ({"noop-rerun-1": ("verifier-timeout", None)}, 4, "run.verifier-timeout"),
        ({"reference-rerun-1": ("solution-timeout", None)}, 3, "run.solution-timeout"),
    ],
)
def test_a_refused_trial_ends_the_tasks_other_trials(tree, outcomes, ran, rule):
    """A verifier that hangs costs one timeout, not twelve: the rest are skipped,
    recorded as such (neither passed nor infrastructure)."""
    runtime = CountingRuntime(outcomes)
    seen: list[str] = []
    findings, trials = run_dynamic(tree, runtime, reruns=2, on_trial=lambda t: seen.append(t.label))
    total = len(plan(2)) + len(_probes(tree))
    assert len(runtime.calls) == ran
    assert len(trials) == len(seen) == total  # every trial recorded, progress completes
    skipped = [t for t in trials if t.status == "skipped"]
    assert len(skipped) == total - ran
    assert all(runtime.calls[-1] in t.detail and t.reward is None for t in skipped)
    assert [f.rule_id for f in findings if f.rule_id != "run.flaky"] == [rule]
    report = _report(trials)
    assert report.derive_label().status == "needs_repair"
    outcomes_ = {o.rule_id: o.status for o in report.check_outcomes()}
    assert all(outcomes_[label] == "skipped" for label in _probes(tree))


def test_trials_not_run_a_scoring_no_op_and_fooled_probes_do_not_end_the_task(tree):
    """Only the task's refusal by a reference run or a timeout ends it: an outage is no
    verdict, a no-op's reruns tell a flaky verifier apart, and every fooling probe is
    named."""
    everything = len(plan(1)) + len(_probes(tree))
    for outcomes, rules in (
        ({"reference": ("error", None)}, ["run.error"]),
        ({"noop": ("ok", 1.0)}, ["run.noop-passed", "run.flaky"]),
        (dict.fromkeys(_probes(tree), ("ok", 1.0)), sorted(_probes(tree))),
    ):
        runtime = CountingRuntime(outcomes)
        findings, trials = run_dynamic(tree, runtime, reruns=1)
        assert len(runtime.calls) == everything, outcomes
        assert sorted(f.rule_id for f in findings) == sorted(rules)
        assert not any(t.status == "skipped" for t in trials)
    sound = CountingRuntime()
    findings, trials = run_dynamic(tree, sound, reruns=1)
    assert findings == [] and len(sound.calls) == len(trials) == len(plan(1)) + len(_probes(tree))
    assert _report(trials).derive_label().status == "verified"
    assert {o.status for o in _report(trials).check_outcomes()} == {"passed"}


def test_an_environment_the_engine_could_not_start_leaves_every_trial_not_run(tree):
    runtime = CountingRuntime(prepare_error=EngineError("daemon gone", retries=2))
    findings, trials = run_dynamic(tree, runtime, reruns=0)
    assert runtime.calls == []
    assert [t.status for t in trials] == ["error"] * (len(plan(0)) + len(_probes(tree)))
    assert [t.infra_retries for t in trials][:2] == [2, 0]  # the start's retries, once
    assert [f.rule_id for f in findings] == ["run.error"] and "daemon gone" in trials[0].detail
    assert _report(trials).derive_label().status == "unverified"
    broken = CountingRuntime(prepare_error=ImageBuildError("RUN exit 1"))
    findings, trials = run_dynamic(tree, broken, reruns=0)
    assert [f.rule_id for f in findings] == ["run.build-failed"] and trials == []


def test_a_report_with_trials_not_run_is_never_cached_as_a_verdict(tmp_path):
    cache = ResultCache(tmp_path)
    lost = _report([*_sound(), trial(PROBE_LABELS[0], status="error")])
    cache.put("a", lost)
    assert cache.get("a") is None
    only_finding = _report(_sound())
    only_finding.findings.append(Finding(rule_id="run.error", message="not run"))
    cache.put("b", only_finding)
    assert cache.get("b") is None
    refused = _report([trial("reference", 0.0), trial("noop", status="skipped")])
    cache.put("c", refused)  # a refusal is a verdict, skipped trials and all
    assert cache.get("c") is not None


def test_a_refused_reference_carries_the_verifiers_evidence():
    """Issue 28: a reference that scored 0 after a clean solve.sh was refused as
    `reference scored 0 (want 1.0). ` and nothing else; the failing tests and the
    verifier's last lines are the evidence of why."""
    log = "\n".join(
        [
            "..F.E",
            "=========================== short test summary info ============================",
            *(
                f"FAILED tests/test_app.py::test_case_{n} - ImportError: cannot import name"
                for n in range(7)
            ),
            "ERROR tests/test_json.py::test_dump - werkzeug 3.1.9 needs flask>=3",
            "8 failed, 3 passed in 0.41s",
            "tests: 11 run, 3 passed, expected 11, canaries intact",
        ]
    )
    reference = TrialResult(
        label="reference", status="ok", reward=0.0, solution_exit_code=0, verifier_log_tail=log
    )
    (finding,) = judge([reference, trial("noop", 0.0)])
    assert finding.rule_id == "run.reference-failed"
    assert "tests/test_app.py::test_case_0" in finding.message
    assert "(+3 more)" in finding.message  # 8 failing tests, 5 named
    assert "tests: 11 run, 3 passed, expected 11" in finding.message
    assert "8 failed, 3 passed" in finding.message


def test_planted_files_go_in_one_archive_of_file_entries_only() -> None:
    """No folder entry: the engine would chown and chmod an existing folder to the
    entry's owner and mode (the agent's /workspace), where `mkdir -p` left it alone."""
    data = pack_at_root({"/workspace/tests/test_a.py": b"x", "/logs/verifier/reward.txt": b"1\n"})
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert sorted(members) == ["logs/verifier/reward.txt", "workspace/tests/test_a.py"]
    assert all(m.isfile() and m.uid == 0 and m.mode == 0o644 for m in members.values())
    for bad in ("workspace/x.py", "/../etc/passwd", "/", "/a/../../b"):
        with pytest.raises(ValueError):
            pack_at_root({bad: b""})


def test_a_home_path_a_finding_quotes_stays_out_of_the_label():
    """requests-2931: a public PDF of the checkout names `/Users/<someone>` (a warning);
    the label the oracle wrote into task.toml quoted the finding, so the next
    validation failed the task's own `semantic.host-path` check on task.toml."""
    from repo2rlenv.validate.semantic_rules import HOST_PATH

    home = "/Users/" + "kreitz"
    found = Finding(
        rule_id="semantic.host-path",
        severity="warning",
        path="environment/workspace/ext/logo.ai",
        message=f"environment/workspace/ext/logo.ai names a host home path: '{home}/x'",
    )
    label = TaskReport(path="t", task_id="t", findings=[found]).derive_label(deterministic=True)
    [line] = label.evidence
    assert line.startswith("semantic.host-path: environment/workspace/ext/logo.ai names")
    assert home not in line and HOST_PATH.search(line) is None


def test_every_packed_file_is_dated_so_zipfile_accepts_it():
    """sphinx-8721: its epub builder zips files it copied from the checkout, and zipfile
    refuses times before 1980; a tar entry's default time (0) gave the image 1970 files,
    and the reference failed under our runtime while it passed under Harbor."""
    archives = {
        "pack": pack({"a/b.txt": (b"b", False)}, "tests"),
        "pack_at_root": pack_at_root({"/workspace/c.py": b"c"}),
        "build_context": build_context({"Dockerfile": (b"FROM x\n", False)}).getvalue(),
    }
    for name, data in archives.items():
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            members = tar.getmembers()
        assert members and {m.mtime for m in members} == {FILE_MTIME}, name
        for member in members:
            stamp = time.gmtime(member.mtime)[:6]
            zipfile.ZipInfo(member.name, date_time=stamp)  # raises before 1980
            zipfile.ZipInfo(member.name, date_time=time.localtime(member.mtime)[:6])
    assert time.gmtime(FILE_MTIME).tm_year >= 1981  # a day's time zone cannot reach 1979


def test_a_verdict_cached_under_other_file_dates_is_not_reused(monkeypatch):
    """The Docker runtime's cache key names the date its packed files carry: verdicts
    reached on 1970 files (before `FILE_MTIME`) must miss, not be served again."""
    from repo2rlenv.runtime import archive, docker_runtime

    class Images:
        def key_for(self, task):
            return "rlenv-harvest-env:abc"

    runtime = docker_runtime.DockerRuntime(client=object())
    runtime._images = Images()
    today = runtime.environment_key(None)
    assert today.startswith("rlenv-harvest-env:abc") and str(archive.FILE_MTIME) in today
    monkeypatch.setattr(docker_runtime, "FILE_MTIME", 0)
    assert runtime.environment_key(None) != today
