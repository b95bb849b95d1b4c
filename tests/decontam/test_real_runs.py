"""Acceptance: the real SWE runs of SWE-bench Verified instances are flagged against the
Verified table (the copy in ../shared, never the network); the real runs of other
instances are not. The runs' own words are compared (their first user turn and their
submission), not the instance id they are named after."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repo2rlenv.decontam.facts import TaskFacts, diff_files
from repo2rlenv.decontam.report import Decontaminator
from repo2rlenv.formats import read_record
from repo2rlenv.mining.instances import run_instance

pytestmark = pytest.mark.timeout(300)

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "samples" / "swe"
VERIFIED = SHARED / "SWE-bench_Verified-test.parquet"
RUNS = REPO / "tests" / "data" / "swe" / "mini-swe-agent"


@pytest.fixture(scope="module")
def verified() -> Decontaminator:
    if not VERIFIED.exists():
        pytest.skip("shared SWE-bench Verified table absent (../shared/samples/swe)")
    return Decontaminator.load([str(VERIFIED)])


def _runs() -> list[tuple[str, TaskFacts]]:
    """(instance id, what the run says) for every real run named after an instance."""
    found = []
    for path in sorted(RUNS.glob("*.traj.json")):
        session = read_record(json.loads(path.read_text()), path.name)
        instance = run_instance(session)
        if instance is None or not session.user_turns:
            continue
        block = (session.trajectory.extra or {}).get("swe", {})
        facts = TaskFacts(
            task_id=path.name,
            instruction=session.user_turns[0].text,
            files=diff_files(block.get("submission") or ""),
        )
        found.append((instance, facts))
    return found


def test_real_runs_of_verified_instances_are_all_flagged(verified: Decontaminator):
    index = verified.indexes[0]
    runs = _runs()
    of_verified = [(i, f) for i, f in runs if i in index.by_id]
    others = [(i, f) for i, f in runs if i not in index.by_id]
    assert len(of_verified) >= 2 and len(others) >= 2, [i for i, _ in runs]
    for instance, facts in of_verified:
        result = verified.check(facts)
        hits = {(m.rule, m.instance_id) for m in result.matches}
        assert ("decontam.near-duplicate-text", instance) in hits, (instance, result)
        # the run changed a file the instance's fix touches (astropy-14309's run also
        # changed two sibling `connect.py`/`hdf5.py` readers the fix left alone)
        assert facts.files & index.by_id[instance].files, (instance, facts.files)
    for instance, facts in others:  # SWE-bench dev-split runs: not Verified instances
        assert not verified.check(facts).contaminated, instance


def test_a_run_named_after_its_instance_matches_by_id_too(verified: Decontaminator):
    instance, facts = next((i, f) for i, f in _runs() if i in verified.indexes[0].by_id)
    named = TaskFacts(facts.task_id, instruction="", instance_id=instance)
    assert {m.rule for m in verified.check(named).matches} == {"decontam.same-instance"}
