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
