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


def dumps(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # integers beyond 64 bits, exotic keys
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def new_event_loop() -> asyncio.AbstractEventLoop:
    return uvloop.new_event_loop() if uvloop is not None else asyncio.new_event_loop()


def run(coroutine: Any) -> Any:
    if uvloop is not None:
        return uvloop.run(coroutine)
    return asyncio.run(coroutine)
