"""The fast JSON path answers exactly what `json.loads` answers, or steps aside."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repo2rlenv.formats import jsondecode
from repo2rlenv.formats.jsondecode import NOT_JSON, decode, decode_fast

pytestmark = pytest.mark.skipif(jsondecode.orjson is None, reason="orjson is not installed")

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63 - 5, max_value=2**64 + 5)
    | st.integers(min_value=-(2**63) - 5, max_value=-(2**63) + 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def same(a: object, b: object) -> bool:
    """Equal values of equal types all the way down (1 == 1.0 is not good enough)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


@settings(max_examples=400, deadline=None)
@given(values, st.booleans())
def test_decode_equals_the_standard_library(value: object, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert same(decode(text), json.loads(text))
    fast = decode_fast(text.encode("utf-8", "surrogatepass"))
    assert fast is NOT_JSON or same(fast, json.loads(text))


@pytest.mark.parametrize(
    "text",
    [
        "18446744073709551616",  # 2**64: orjson alone would give a float
        '{"n": 123456789012345678901234567890}',
        "[-9223372036854775809, 1]",  # below int64
        '{"cost": 0.000021000000000000002}',  # long digit run after a dot
        '"id 12345678901234567890123"',  # long digit run in a string
        "[NaN, Infinity, -Infinity]",
        "[1e400]",
        '"\\ud800"',  # a lone surrogate
        "null",
        '{"a": 1, "a": 2}',
    ],
)
def test_edge_cases_match_the_standard_library(text: str) -> None:
    assert same(decode(text), json.loads(text))


@pytest.mark.parametrize("text", ["", "   ", "{", "[1,]", "{'a': 1}", "[1] x", "\ufeff{}"])
def test_not_json_is_reported_not_raised(text: str) -> None:
    assert decode(text) is NOT_JSON


def test_deep_nesting_is_not_json_instead_of_a_crash() -> None:
    assert decode("[" * 100_000 + "]" * 100_000) is NOT_JSON


def test_without_orjson_the_standard_library_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsondecode, "orjson", None)
    assert decode_fast(b'{"a": 1}') is NOT_JSON
    assert same(decode('{"a": [1, 2.5, "x"]}'), {"a": [1, 2.5, "x"]})
    assert decode("[1,") is NOT_JSON
