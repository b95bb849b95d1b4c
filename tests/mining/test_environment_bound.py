"""PASS_TO_PASS tests bound to SWE-bench's networked environment (psf/requests-5414's
`TestTimeout`, which expects a connect to 10.255.255.1 to time out) are settled by the
oracle: failing on the reference and on the start alike, they stop deciding, listed in
the provenance and warned about by `validate`. A FAIL_TO_PASS name never is."""

from __future__ import annotations

import json

import pytest

from repo2rlenv.kinds.grading import FAILED_NAMES, GRADE_PY, grading_files
from repo2rlenv.mining.environment_bound import (
    environment_bound,
    failed_names,
    settle,
    settled_bundle,
)
from repo2rlenv.runtime import TrialResult
from repo2rlenv.validate.findings import Finding
from repo2rlenv.validate.report import TaskReport
from tests.mining.test_pytest_config import _run_verifier

pytestmark = pytest.mark.timeout(120)

F2P = ["test_x.py::test_fixed"]
P2P = [f"test_x.py::test_kept_{i}" for i in range(8)]
SETTINGS = {"names": [*F2P, *P2P], "fail_to_pass": F2P}


def test_the_verifier_prints_its_failing_names_on_the_line_read_back():
    assert f'FAILED_NAMES = "{FAILED_NAMES}"' in GRADE_PY
    log = f"not passed (failed): a\n{FAILED_NAMES}" + json.dumps(["a", "b c[x"]) + "\ntests: 2"
    assert failed_names(log) == ["a", "b c[x"]
    assert failed_names("tests: 2 run") is None
    assert failed_names(f'{FAILED_NAMES}["cut') is None  # a tail that lost its end


def test_only_passing_to_passing_names_failing_on_both_states_are_settled():
    two = P2P[:2]
    assert environment_bound(SETTINGS, two, [*two, F2P[0]]) == sorted(two)
    assert environment_bound(SETTINGS, [*two, F2P[0]], [*two, F2P[0]]) is None  # F2P: never
    assert environment_bound(SETTINGS, two, two[:1]) is None  # passes on the start: a regression
    assert environment_bound(SETTINGS, P2P[:3], P2P) is None  # over a quarter of them
    assert environment_bound(SETTINGS, ["not_a_name"], ["not_a_name"]) is None
    assert environment_bound(SETTINGS, [], []) is None


def _bundle():
    from schemas import TaskBundle, TaskConfig
    from schemas.provenance import Repo2RLEnvMetadata, SweRunProvenance

    config = TaskConfig.model_validate({"schema_version": "1.4"})
    config.metadata.repo2rlenv = Repo2RLEnvMetadata(generator="test", swe=SweRunProvenance())
    files = grading_files(
        mode="all",
        cwd="",
        targets=["test_x.py"],
        expected=len(SETTINGS["names"]),
        protected={},
        hidden={},
        config=None,
        names=SETTINGS["names"],
        fail_to_pass=F2P,
    )
    return TaskBundle(task_id="t-1000-x", config=config, instruction="fix it", files=files)


def test_the_settled_verifier_leaves_them_out_and_records_them(tmp_path):
    settled = settled_bundle(_bundle(), P2P[:2])
    grading = json.loads(next(f for f in settled.files if f.path == "tests/grading.json").content)
    assert grading["environment_bound"] == P2P[:2]
    assert grading["expected"] == len(SETTINGS["names"]) - 2
    assert settled.config.metadata.repo2rlenv.swe.environment_bound_tests == P2P[:2]


TESTS = "\n".join(
    [
        "def test_fixed():\n    assert True\n",
        *(f"def test_kept_{i}():\n    assert {i} > 1\n" for i in range(8)),  # 0, 1 fail
    ]
)


def test_the_verifier_scores_the_rest_and_never_drops_a_fail_to_pass_name(tmp_path):
    common = {
        "targets": ["test_x.py"],
        "names": SETTINGS["names"],
        "protected": {},
        "hidden": {"test_x.py": TESTS},
        "config": None,
        "fail_to_pass": F2P,
    }
    reward, printed = _run_verifier(tmp_path / "before", {}, **common)
    assert reward == "0.0" and failed_names(printed) == P2P[:2], printed
    bound = environment_bound(SETTINGS, P2P[:2], P2P[:2])
    reward, printed = _run_verifier(tmp_path / "after", {}, **common)
    settings_path = tmp_path / "after" / "tests" / "grading.json"
    settings = json.loads(settings_path.read_text())
    settings.update(environment_bound=bound, expected=len(SETTINGS["names"]) - 2)
    settings_path.write_text(json.dumps(settings))
    reward, printed = _run_verifier_again(tmp_path / "after")
    assert reward == "1.0", printed
    assert "environment-bound, not deciding: test_x.py::test_kept_0" in printed
    # a FAIL_TO_PASS name slipped into the list still decides
    failing = TESTS.replace("def test_fixed():\n    assert True", "def test_fixed():\n    assert 0")
    (tmp_path / "after" / "tests" / "hidden" / "test_x.py").write_text(failing)
    settings.update(environment_bound=[*bound, F2P[0]])
    settings_path.write_text(json.dumps(settings))
    reward, printed = _run_verifier_again(tmp_path / "after")
    assert reward == "0.0" and failed_names(printed) == F2P, printed


def _run_verifier_again(root):
    """The verifier of `root` once more, its settings as the test left them."""
    import contextlib
    import io
    import types

    source = (
        GRADE_PY.replace('"/tests', f'"{root / "tests"}')
        .replace('"/logs', f'"{root / "logs"}')
        .replace('Path("/workspace")', f'Path("{root / "workspace"}")')
    )
    space: dict[str, object] = {"__name__": "rlenv_grade"}
    exec(compile(source, "grade.py", "exec"), space)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        types.SimpleNamespace(**space).main()
    return (root / "logs" / "verifier" / "reward.txt").read_text().strip(), printed.getvalue()


class _Runtime:
    """The start's trial, as the engine would answer it."""

    def __init__(self, start_log: str) -> None:
        self.start_log, self.trials = start_log, []

    def prepare(self, tree):
        return "image"

    def run_trial(self, tree, image, request):
        self.trials.append(request.label)
        return TrialResult(
            label=request.label, status="ok", reward=0.0, verifier_log_tail=self.start_log
        )


def _refused(reference_failed: list[str]) -> TaskReport:
    log = FAILED_NAMES + json.dumps(reference_failed)
    return TaskReport(
        path="t",
        task_id="t",
        findings=[Finding(rule_id="run.reference-failed", message="reference scored 0")],
        trials=[TrialResult(label="reference", status="ok", reward=0.0, verifier_log_tail=log)],
    )


def test_settle_runs_the_start_once_and_only_when_the_rule_allows(tmp_path):
    from repo2rlenv.bundle import write_bundle

    bundle = _bundle()
    path = write_bundle(bundle, tmp_path / "t").path
    runtime = _Runtime(FAILED_NAMES + json.dumps([*P2P[:2], *F2P]))
    settled = settle(bundle, _refused(P2P[:2]), path, runtime)
    assert settled is not None and runtime.trials == ["noop"]
    assert settled.config.metadata.repo2rlenv.swe.environment_bound_tests == P2P[:2]
    runtime.trials = []
    assert settle(bundle, _refused([*P2P[:1], *F2P]), path, runtime) is None
    assert runtime.trials == []  # a failing FAIL_TO_PASS name: no extra trial at all
    assert settle(bundle, _refused(P2P[:2]), path, _Runtime(FAILED_NAMES + "[]")) is None


def test_validate_warns_about_a_settled_task_on_every_run(tmp_path):
    from repo2rlenv.bundle import read_task_dir, write_bundle
    from repo2rlenv.validate.checks import run_static

    path = write_bundle(settled_bundle(_bundle(), P2P[:2]), tmp_path / "t").path
    warned = [f for f in run_static(read_task_dir(path)) if f.rule_id.startswith("swe.")]
    assert [(f.rule_id, f.severity) for f in warned] == [("swe.environment-bound-tests", "warning")]
    assert "2 PASS_TO_PASS name(s) do not decide: test_x.py::test_kept_0" in warned[0].message
    path = write_bundle(_bundle(), tmp_path / "unsettled").path
    assert not [f for f in run_static(read_task_dir(path)) if f.rule_id.startswith("swe.")]


def test_the_mine_counts_a_settled_task_as_a_warning():
    from repo2rlenv.emit import Draft, YieldReport

    report = YieldReport(pipeline="sessions")
    report.count(Draft(settled_bundle(_bundle(), P2P[:2])))
    report.count(Draft(_bundle()))
    assert report.warnings["swe.environment-bound-tests"] == 1


def test_a_spec_s_eval_exports_reach_the_pytest_run(tmp_path):
    """A spec's `eval_commands` exports (`grading_files(env=...)`) are the pytest run's
    environment; without them the run has the verifier's own, and the test fails."""
    test = "import os\n\ndef test_locale():\n    assert os.environ.get('LC_ALL') == 'en_US.UTF-8'\n"
    common = {
        "targets": ["test_env.py"],
        "names": ["test_env.py::test_locale"],
        "protected": {},
        "hidden": {"test_env.py": test},
        "config": None,
    }
    reward, printed = _run_verifier(tmp_path / "with", {}, env={"LC_ALL": "en_US.UTF-8"}, **common)
    assert reward == "1.0", printed
    reward, printed = _run_verifier(tmp_path / "without", {}, **common)
    assert reward == "0.0", printed


def _runner_bundle():
    """A Django task's bundle: the own runner's verifier, the row's names in `runner`."""
    from repo2rlenv.kinds import swe_runners
    from schemas import TaskBundle, TaskConfig
    from schemas.provenance import Repo2RLEnvMetadata, SweRunProvenance
    from tests.mining.test_swe_runners import CHECKOUT, DJANGO_PATCH

    config = TaskConfig.model_validate({"schema_version": "1.4"})
    config.metadata.repo2rlenv = Repo2RLEnvMetadata(generator="test", swe=SweRunProvenance())
    django = swe_runners.own_runner("django/django", "4.2", DJANGO_PATCH, CHECKOUT)
    files = swe_runners.runner_grading_files(
        django, fail_to_pass=F2P, pass_to_pass=P2P, start=CHECKOUT, protected={}, hidden={}
    )
    return TaskBundle(task_id="t-1000-x", config=config, instruction="fix it", files=files)


def test_an_own_runner_task_is_settled_by_the_same_rule(tmp_path):
    """Django and SymPy tasks keep the row's names under `runner`, not `names`: the
    rule reads them there, and the settled verifier gets the list at the top level,
    where its grader (`swebench_grade.decide`) and `validate`'s warning read it."""
    from importlib import metadata

    try:
        metadata.distribution("swebench")
    except metadata.PackageNotFoundError:
        pytest.skip("swebench is not installed (pip install --no-deps swebench==4.1.0)")
    from repo2rlenv.bundle import read_task_dir, write_bundle
    from repo2rlenv.mining.environment_bound import deciding_names
    from repo2rlenv.validate.checks import run_static

    bundle = _runner_bundle()
    settings = json.loads(next(f for f in bundle.files if f.path == "tests/grading.json").content)
    assert deciding_names(settings) == ([*F2P, *P2P], F2P)
    assert deciding_names({"mode": "all"}) is None
    assert environment_bound(settings, P2P[:2], P2P[:2]) == P2P[:2]
    assert environment_bound(settings, F2P, F2P) is None
    path = write_bundle(bundle, tmp_path / "t").path
    runtime = _Runtime(FAILED_NAMES + json.dumps([*P2P[:2], *F2P]))
    settled = settle(bundle, _refused(P2P[:2]), path, runtime)
    assert settled is not None and runtime.trials == ["noop"]
    grading = json.loads(next(f for f in settled.files if f.path == "tests/grading.json").content)
    assert grading["environment_bound"] == P2P[:2]
    assert grading["expected"] == settings["expected"]  # the runner's count is not the names'
    assert grading["runner"]["pass_to_pass"] == P2P  # the row's names stay as the row has them
    written = write_bundle(settled, tmp_path / "settled").path
    warned = [f.rule_id for f in run_static(read_task_dir(written)) if f.rule_id.startswith("swe.")]
    assert warned == ["swe.environment-bound-tests"]
