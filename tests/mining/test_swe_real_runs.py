"""One real, resolved run per kind of SWE-bench environment, proven in Docker.

Each case is a published mini-swe-agent run (Gemini 3 Pro; its SWE-bench report says
resolved) of a repository whose environment is made another way: SymPy's `bin/test`
and Django's `runtests.py` (own runners, SWE-bench's log parsers) and astropy (C and
Cython extensions compiled in the image build). The pytest kind's real case is
marshmallow's (`test_instance_deps.py`), whose shallow bare copy is in tests/data.

Shallow bare copies of these repositories at their one base commit, packed
(`git repack -adf`), take 13 MB (sympy 39de9a26), 11 MB (django 0b31e024) and 7 MB
(astropy cdb66059), and the three cases 11 minutes on a 2-core machine: more than
tests/data and CI's time take. Each case therefore runs only where its environment
variable names a repository holding that commit (a bare mirror or a
fork's), and skips with that reason elsewhere."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from repo2rlenv.emit import Draft, Skip
from repo2rlenv.formats import read_record
from tests.mining.test_instances import _pipeline
from tests.mining.test_swe_runners import VERIFIED  # skips this module without swebench

RUNS = Path(__file__).resolve().parents[1] / "data/swe/mini-swe-agent"


@dataclass(frozen=True)
class RealRun:
    """A run file in tests/data, its repository and what its task's verifier runs."""

    instance: str
    url: str
    mirror_variable: str
    runner: str | None  # the own runner's first argument; None: the pytest verifier
    labels: tuple[str, ...]  # the own runner's labels, or the hidden tests' node files

    @property
    def mirror(self) -> Path | None:
        setting = os.environ.get(self.mirror_variable, "")
        return Path(setting) if setting and Path(setting).exists() else None


CASES = [
    RealRun(
        "sympy__sympy-23824", "https://github.com/sympy/sympy", "RLENV_SYMPY_MIRROR",
        "bin/test", ("sympy/physics/hep/tests/test_gamma_matrices.py",),
    ),
    RealRun(
        "django__django-15572", "https://github.com/django/django", "RLENV_DJANGO_MIRROR",
        "tests/runtests.py", ("template_tests.test_autoreloader",),
    ),
    RealRun(
        "astropy__astropy-14309", "https://github.com/astropy/astropy", "RLENV_ASTROPY_MIRROR",
        None, ("astropy/io/fits/tests/test_connect.py",),
    ),
]  # fmt: skip


def _verifier_settings(draft: Draft) -> dict:
    return json.loads(next(f.content for f in draft.bundle.files if f.path == "tests/grading.json"))


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.skipif(not VERIFIED.exists(), reason=f"no SWE-bench Verified table at {VERIFIED}")
@pytest.mark.parametrize("case", CASES, ids=[c.instance for c in CASES])
def test_a_real_resolved_run_is_proven_in_its_benchmark_s_environment(
    case: RealRun, tmp_path, docker_ready
):
    """The run becomes an instance task whose verifier runs the instance's own command
    (or pytest over the compiled checkout), and `validate` proves it: reference 1,
    no-op 0. A broken runner choice, recipe or log parser fails the oracle."""
    if case.mirror is None:
        pytest.skip(f"{case.mirror_variable} names no repository of {case.url}")
    from repo2rlenv.bundle import write_bundle
    from repo2rlenv.runtime import DockerRuntime
    from repo2rlenv.validate import ValidateOptions, validate_one
    from repo2rlenv.validate.runner import SilentProgress

    pipeline = _pipeline(
        tmp_path, case.mirror, url=case.url, base_image=docker_ready,
        kinds=["instance-repair"], instances=str(VERIFIED),
    )  # fmt: skip
    path = RUNS / f"{case.instance}.traj.json"
    session = read_record(json.loads(path.read_text()), path.name)
    events = list(pipeline.session_events(session, "r1", None))
    drafts = [e for e in events if isinstance(e, Draft)]
    assert len(drafts) == 1, [e for e in events if isinstance(e, Skip)]
    settings = _verifier_settings(drafts[0])
    if case.runner is None:
        assert "runner" not in settings
        assert {node.split("::")[0] for node in settings["fail_to_pass"]} >= set(case.labels)
    else:
        assert settings["runner"]["argv"][0] == case.runner
        assert settings["runner"]["labels"] == list(case.labels)
    task = write_bundle(drafts[0].bundle, tmp_path / "out").path
    report = validate_one(
        task, ValidateOptions(reruns=0, probes=False), DockerRuntime(), None, SilentProgress()
    )
    assert report.valid, [f.rule_id for f in report.findings]
    assert report.label.status == "verified"
