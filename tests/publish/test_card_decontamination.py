"""The card's decontamination section: per table the tasks checked and matching, per
rule the tasks matching, and the tasks never checked said as unknown, never as clean."""

from __future__ import annotations

import pytest
from huggingface_hub import DatasetCard

from repo2rlenv.bundle import read_task_dir, replace_config
from repo2rlenv.manifest import write_manifest
from repo2rlenv.publish.card import card_text
from repo2rlenv.publish.selection import select_tasks
from schemas.provenance import DecontaminationResult, DecontamMatch
from tests.publish.test_hub_push import _task

pytestmark = pytest.mark.timeout(60)


def _label(task, result: DecontaminationResult) -> None:
    config = read_task_dir(task).config.model_copy(deep=True)
    config.metadata.repo2rlenv.decontamination = result
    replace_config(task, config)


def test_the_card_says_what_was_checked_and_what_matched(tmp_path) -> None:
    hit = DecontamMatch(rule="decontam.near-duplicate-text", benchmark="swe-bench-verified",
                        instance_id="a__b-1", score=0.9)  # fmt: skip
    tables = ["swe-bench-verified", "swe-bench-lite"]
    copied = DecontaminationResult(checked_against=tables, contaminated=True, matches=[hit])
    _label(_task(tmp_path, "copied", licence="mit"), copied)
    fresh = DecontaminationResult(checked_against=tables, contaminated=False)
    _label(_task(tmp_path, "fresh", licence="mit"), fresh)
    _task(tmp_path, "unchecked", licence="mit")
    write_manifest(tmp_path)
    text = DatasetCard(card_text("o/n", select_tasks(tmp_path), "1")).text
    for row in ("| swe-bench-lite | 2 | 0 |", "| swe-bench-verified | 2 | 1 |",
                "| decontam.near-duplicate-text | 1 |",
                "1 task(s) were not checked: unknown, not clean."):  # fmt: skip
        assert row in text, text


def test_a_card_of_unchecked_tasks_says_contamination_is_unknown(tmp_path) -> None:
    _task(tmp_path, "unchecked", licence="mit")
    write_manifest(tmp_path)
    text = DatasetCard(card_text("o/n", select_tasks(tmp_path), "1")).text
    assert "## Decontamination" in text and "is unknown" in text
