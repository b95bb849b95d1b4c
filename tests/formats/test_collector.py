"""The cycle collector is paused while a record is decoded, read and replayed, and comes
back exactly as it was: a pause that leaked would leave a long mining run (or the
caller's process) without cycle collection."""

from __future__ import annotations

import gc

import pytest

from repo2rlenv.formats.collector import collector_paused


def test_nested_pauses_resume_only_at_the_outermost() -> None:
    assert gc.isenabled()
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause must not turn it back on early
    assert gc.isenabled()


def test_a_failure_inside_still_resumes() -> None:
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_caller_that_turned_it_off_keeps_it_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("jobs", [1, 3])
def test_a_mine_leaves_the_collector_on(tmp_path, jobs: int) -> None:
    # Records paused in parallel threads overlap; the collector must still be on after.
    from pathlib import Path

    from repo2rlenv.emit import emit_all
    from repo2rlenv.mining.session_miner import MineOptions, SessionPipeline

    runs = Path(__file__).resolve().parents[1] / "data" / "swe"
    options = MineOptions(dataset=str(runs), jobs=jobs, validate_tasks=False, base_image="img:1")
    report = emit_all(SessionPipeline(options, runtime=None), tmp_path / "out").to_dict()
    assert report["records_read"] > 5
    assert gc.isenabled()
