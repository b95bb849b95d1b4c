"""Secret-shaped text in a public checkout (moto's AWS documentation key, test private
keys): files that are exactly the anchored commit's blobs are exempt from the refusal
and reported; everything else (the run's patch, a changed file, the problem statement)
is still scanned, and `strict_secrets` restores the refusal."""

from __future__ import annotations

import git
import pytest

from repo2rlenv.checkout_secrets import blob_id, public_checkout_secrets
from repo2rlenv.emit import Draft, Skip, YieldReport
from repo2rlenv.formats import read_record
from repo2rlenv.gate import tree_of
from repo2rlenv.kinds.common import Reject, check_has_no_secrets
from repo2rlenv.secrets import REDACTED
from repo2rlenv.validate.checks import run_static
from tests.anchors.test_anchors import CALC_BUGGY, TESTS
from tests.mining.test_instance_repair import SUBMISSION, TEST_PATCH
from tests.mining.test_instances import _pipeline, _row, _run, _table

AWS_DOC_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
"""AWS's documentation example key, as moto's `sts/models.py` holds it."""
PEM = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEpAIBAAKCAQEAtest\n-----END RSA PRIVATE KEY-----\n"
STS = f'ACCESS_KEY_ID = "{AWS_DOC_KEY}"\n'


def _events(tmp_path, path, commit, *, submission=SUBMISSION, strict=False, **row):
    """Mine one mini-swe-agent run of an instance of `path` at `commit` (no Docker)."""
    fields = {
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": '["test_hidden.py::test_add_is_a_sum"]',
        "PASS_TO_PASS": "[]",
        "problem_statement": "add() subtracts its arguments in /testbed/calc.py",
        **row,
    }
    table = _table(tmp_path, [_row("example__calc-1", commit, **fields)])
    run = _run()
    run["messages"] = run["messages"][:2]
    run["info"]["submission"] = submission
    session = read_record(run, "example__calc-1.traj.json")
    pipeline = _pipeline(
        tmp_path, path, instances=str(table), kinds=["instance-repair"], strict_secrets=strict
    )
    return pipeline.session_events(session, "r1", None)


@pytest.fixture
def moto_like(tmp_path):
    """A repository that ships a test key and AWS's documentation key, as moto does."""
    path = tmp_path / "calc"
    repository = git.Repo.init(path)
    files = {
        "calc.py": CALC_BUGGY,
        "test_calc.py": TESTS,
        "sts.py": STS,
        "resources/ca.key": PEM,
    }
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    repository.index.add(list(files))
    actor = git.Actor("t", "t@example.com")
    return path, repository.index.commit("start", author=actor, committer=actor).hexsha


def test_checkout_files_with_test_keys_are_accepted_and_reported(moto_like, tmp_path):
    path, commit = moto_like
    [draft] = _events(tmp_path, path, commit)
    assert isinstance(draft, Draft)
    files = {f.path: f.content for f in draft.bundle.files}
    # carried as the repository publishes them, not redacted
    assert files["environment/workspace/sts.py"].decode() == STS
    assert files["environment/workspace/resources/ca.key"].decode() == PEM
    block = draft.bundle.config.metadata.repo2rlenv
    listed = {e.path: (e.blob, e.rules) for e in block.public_checkout_secrets}
    assert listed == {
        "resources/ca.key": (blob_id(PEM.encode()), ["private-key"]),
        "sts.py": (blob_id(STS.encode()), ["aws-access-key"]),
    }
    # the blob ids are git's own
    repository = git.Repo(path)
    assert listed["sts.py"][0] == repository.commit(commit).tree["sts.py"].hexsha
    # the yield report names the warning, the file count and the rules
    report = YieldReport("sessions")
    report.count(draft)
    summary = report.to_dict()
    assert summary["warnings"] == {"secrets.public-checkout": 1}
    [record] = summary["records"]
    assert record["warnings"] == [
        {
            "task_id": draft.bundle.task_id,
            "code": "secrets.public-checkout",
            "files": 2,
            "rules": ["aws-access-key", "private-key"],
        }
    ]


def test_validate_warns_on_published_blobs_and_errs_on_anything_else(moto_like, tmp_path):
    path, commit = moto_like
    [draft] = _events(tmp_path, path, commit)
    tree = tree_of(draft.bundle)
    findings = [f for f in run_static(tree) if f.rule_id.startswith("secrets.")]
    assert {(f.rule_id, f.severity, f.path) for f in findings} == {
        ("secrets.public-checkout", "warning", "environment/workspace/sts.py"),
        ("secrets.public-checkout", "warning", "environment/workspace/resources/ca.key"),
    }
    strict = [f for f in run_static(tree, strict_secrets=True) if f.rule_id.startswith("secrets")]
    assert {(f.rule_id, f.severity) for f in strict} == {("secrets.detected", "error")}
    assert len(strict) == 2
    # a listed file whose bytes are no longer the blob is scanned like any other
    content, executable = tree.files["environment/workspace/sts.py"]
    tree.files["environment/workspace/sts.py"] = (content + b"# edited\n", executable)
    edited = {f.path: f for f in run_static(tree) if f.rule_id.startswith("secrets.")}
    assert edited["environment/workspace/sts.py"].rule_id == "secrets.detected"
    assert edited["environment/workspace/sts.py"].severity == "error"


def test_strict_secrets_restores_the_refusal(moto_like, tmp_path):
    path, commit = moto_like
    events = _events(tmp_path, path, commit, strict=True)
    assert [e.reason for e in events if isinstance(e, Skip)] == ["clean.secret-in-files"]


def test_a_key_the_run_adds_is_still_refused(moto_like, tmp_path):
    """The same public key, added by the run's patch to a file the commit publishes
    without it: the changed file differs from its blob, so it is scanned."""
    path, commit = moto_like
    added = SUBMISSION.replace(
        "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n",
        "@@ -1,2 +1,3 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
        f"+KEY = '{AWS_DOC_KEY}'\n",
    )
    events = _events(tmp_path, path, commit, submission=added)
    assert [e.reason for e in events if isinstance(e, Skip)] == ["clean.secret-in-files"]


def test_a_key_in_the_problem_statement_is_still_redacted(moto_like, tmp_path):
    """The statement (like a session's output) is text from outside the commit: the key
    is redacted there even though the checkout publishes it."""
    path, commit = moto_like
    statement = f"add() subtracts; my run printed {AWS_DOC_KEY} in /testbed/calc.py"
    [draft] = _events(tmp_path, path, commit, problem_statement=statement)
    assert isinstance(draft, Draft)
    assert AWS_DOC_KEY not in draft.bundle.instruction
    assert REDACTED in draft.bundle.instruction


def test_only_files_exactly_equal_to_the_blob_are_exempt():
    published = {"sts.py": STS, "ca.key": PEM}
    # equal: exempt, listed
    check_has_no_secrets({"sts.py": STS}, published)
    assert [e.path for e in public_checkout_secrets({"sts.py": STS}, published)] == ["sts.py"]
    # one byte apart (a trailing newline dropped), or at another path: scanned, refused
    for files in ({"sts.py": STS.rstrip("\n")}, {"other.py": STS}):
        with pytest.raises(Reject) as refused:
            check_has_no_secrets(files, published)
        assert refused.value.reason == "clean.secret-in-files"
        assert public_checkout_secrets(files, published) == []
    # not anchored, or strict: nothing is exempt
    with pytest.raises(Reject):
        check_has_no_secrets({"sts.py": STS}, None)
    assert public_checkout_secrets({"sts.py": STS}, None) == []


def test_the_yield_table_shows_the_warning(moto_like, tmp_path):
    from rich.console import Console

    from repo2rlenv import ui

    path, commit = moto_like
    [draft] = _events(tmp_path, path, commit)
    report = YieldReport("sessions")
    report.count(draft)
    console = Console(record=True, width=120)
    ui.yield_table(report, console)
    assert "warning secrets.public-checkout" in console.export_text()


USERINFO = "http://" + "alice:s3cr3tpass@httpbin.org/get"
"""A test URL with a password in it, as requests' `test_requests.py` holds them."""


def _test_patch_adding(line: str) -> str:
    return TEST_PATCH.replace("@@ -0,0 +1,5 @@", "@@ -0,0 +1,6 @@").replace(
        "+from calc import add\n", f"+from calc import add\n+URL = '{line}'\n"
    )


def test_a_hidden_test_the_benchmark_publishes_is_accepted_and_reported(moto_like, tmp_path):
    """The instance table's test patch is the benchmark's published text: a hidden test
    file made of it (and the commit's blob) is listed and warned about, not refused
    (requests-2931's resolved run was `clean.secrets.detected` on its `test_requests.py`).
    Strict (`validate --strict-secrets`), or the file edited afterwards, it is an error."""
    path, commit = moto_like
    [draft] = _events(tmp_path, path, commit, test_patch=_test_patch_adding(USERINFO))
    assert isinstance(draft, Draft)
    hidden = {f.path: f.content for f in draft.bundle.files}["tests/hidden/test_hidden.py"]
    assert USERINFO.encode() in hidden
    swe = draft.bundle.config.metadata.repo2rlenv.swe
    assert [(e.path, e.blob, e.rules) for e in swe.published_test_secrets] == [
        ("test_hidden.py", blob_id(hidden), ["url-userinfo"])
    ]
    tree = tree_of(draft.bundle)
    found = {f.path: f for f in run_static(tree) if f.rule_id.startswith("secrets.")}
    assert found["tests/hidden/test_hidden.py"].rule_id == "secrets.public-checkout"
    assert found["tests/hidden/test_hidden.py"].severity == "warning"
    strict = [f for f in run_static(tree, strict_secrets=True) if f.rule_id == "secrets.detected"]
    assert "tests/hidden/test_hidden.py" in {f.path for f in strict}
    tree.files["tests/hidden/test_hidden.py"] = (hidden + b"# edited\n", False)
    edited = {f.path: f for f in run_static(tree) if f.rule_id.startswith("secrets.")}
    assert edited["tests/hidden/test_hidden.py"].rule_id == "secrets.detected"
    report = YieldReport("sessions")
    report.count(draft)
    assert report.to_dict()["records"][0]["warnings"][0]["files"] == 3  # + sts.py, ca.key
