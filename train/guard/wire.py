"""The guard's wire: JSON through orjson (required), and uvloop for the event loop when installed.

orjson is a dependency, not an option: the standard library's `json` reads `NaN`,
`Infinity` and any nesting depth, orjson refuses them (a ValueError, so a 400 or a
refused response), and the guard must read a response the same way wherever it runs.
Integers beyond 64 bits read as floats in orjson; only `dumps` of such a value (which
only code, never a parsed input, can make) falls back to `json`, still without NaN.
uvloop stays optional: it changes speed, not results.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import orjson

try:
    import uvloop
except ImportError:  # pragma: no cover
    uvloop = None


def loads(data: bytes | str) -> Any:
    """Raises ValueError on bad JSON, NaN/Infinity, or nesting deeper than 1,024."""
    return orjson.loads(data)


class _DuplicateKey(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKey
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def has_duplicate_keys(text: str | bytes) -> bool:
    """Whether some object in the JSON `text` names a key twice. orjson keeps the last
    value; a first-wins reader (cJSON, simdjson) in a harness would run the first, so a
    call's arguments with a repeated key have no one reading. Only calls' arguments are
    read this way (the standard library's parser, a few µs for a typical call): the
    rest of a checked response is re-serialised from what orjson read. Text the
    standard library cannot read is not called duplicated here (orjson decides it)."""
    if text.count(":" if isinstance(text, str) else b":") < 2:  # a repeated key needs two
        return False
    try:
        json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant)
    except _DuplicateKey:
        return True
    except (ValueError, RecursionError):
        return False
    return False


def dumps(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # integers beyond 64 bits, exotic keys
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumpb(value: Any) -> bytes:
    """`dumps` as bytes, without a decode and re-encode (one per streamed event)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return dumps(value).encode()


def new_event_loop() -> asyncio.AbstractEventLoop:
    return uvloop.new_event_loop() if uvloop is not None else asyncio.new_event_loop()


def run(coroutine: Any) -> Any:
    if uvloop is not None:
        return uvloop.run(coroutine)
    return asyncio.run(coroutine)
