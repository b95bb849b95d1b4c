"""A reference the oracle refuses carries its evidence into the skip and `mine --json`
(issue 28): the refusals of real SWE runs read `reference scored 0 (want 1.0).` and
nothing else, and the yield report kept only the reason code per record."""

from __future__ import annotations

from repo2rlenv.bundle import TaskTree
from repo2rlenv.emit import Skip, YieldReport
from repo2rlenv.formats import read_record
from repo2rlenv.runtime import TrialRequest, TrialResult
from tests.anchors.test_anchors import repo  # noqa: F401 (fixture)
from tests.mining.test_instance_repair import SUBMISSION, TEST_PATCH
from tests.mining.test_instances import _pipeline, _row, _run, _table

FAILING = [f"tests/test_app.py::test_case_{n}" for n in range(3)]
VERIFIER_LOG = "\n".join(
    [
        "FF.F",
        "=========================== short test summary info ============================",
        *(f"FAILED {name} - ImportError: cannot import name 'url_quote'" for name in FAILING),
        "3 failed, 1 passed in 0.52s",
        "tests: 4 run, 1 passed, expected 4, canaries intact",
    ]
)


class ReferenceFails:
    """A runtime whose reference trials run cleanly and score 0, as a task whose image
    holds the wrong library versions does."""

    name = "fake:reference-fails"

    def check(self) -> None: ...

    def environment_key(self, task: TaskTree) -> str:
        return "fake"

    def prepare(self, task: TaskTree) -> str:
        return "image"

    def run_trial(self, task: TaskTree, image: str, request: TrialRequest) -> TrialResult:
        log = VERIFIER_LOG if request.apply_solution else ""
        return TrialResult(
            label=request.label, status="ok", reward=0.0, solution_exit_code=0,
            verifier_log_tail=log,
        )  # fmt: skip

    def abort(self) -> None: ...


def test_the_oracle_refusal_names_the_failing_tests_in_the_skip_and_the_json(repo, tmp_path):  # noqa: F811
    path, commit = repo
    row = _row(
        "example__calc-1", commit, test_patch=TEST_PATCH,
        FAIL_TO_PASS='["test_hidden.py::test_add_is_a_sum"]',
    )  # fmt: skip
    run = _run()
    run["messages"] = run["messages"][:2]
    run["info"]["submission"] = SUBMISSION
    session = read_record(run, "example__calc-1.traj.json")
    table = _table(tmp_path, [row])
    pipeline = _pipeline(tmp_path, path, instances=str(table), kinds=["instance-repair"])
    pipeline.task_check.runtime, pipeline.task_check.cache = ReferenceFails(), None
    [skip] = pipeline.session_events(session, "r1", None)
    assert isinstance(skip, Skip) and skip.reason == "oracle.run.reference-failed"
    for name in FAILING:
        assert name in skip.detail
    assert "tests: 4 run, 1 passed, expected 4" in skip.detail
    report = YieldReport("sessions")
    report.count(skip)
    [record] = report.to_dict()["records"]
    assert record["reasons"] == ["oracle.run.reference-failed"]
    assert record["skips"] == [
        {"reason": "oracle.run.reference-failed", "stage": "candidate", "detail": skip.detail}
    ]
