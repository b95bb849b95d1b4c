"""Reason codes: one table, and no code used anywhere that the table does not explain."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import repo2rlenv.formats as formats
from repo2rlenv.formats import REASONS
from repo2rlenv.formats.reasons import fail

SOURCE = Path(formats.__file__).parent


def test_every_code_in_the_source_is_registered() -> None:
    used = set()
    for module in SOURCE.glob("*.py"):
        used |= set(re.findall(r"\"(format\.[a-z-]+)\"", module.read_text()))
    assert used, "no codes found: the scan is broken"
    assert used - set(REASONS) == set()


def test_table_shape() -> None:
    assert all(re.fullmatch(r"format\.[a-z]+(-[a-z0-9]+)*", code) for code in REASONS)
    assert all(len(meaning) > 20 for meaning in REASONS.values())


def test_unregistered_code_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        fail("format.made-up", "x")
    assert fail("format.empty", "x").reason == "format.empty"
