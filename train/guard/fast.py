"""Optional speed-ups, used when installed: orjson for JSON, uvloop for the event loop.

Both are pure accelerations (same results); without them the standard library is
used. The proxy decodes one JSON chunk per streamed tool-call token and spends most of
its time in the event loop, which is what these two speed up.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - exercised where orjson is absent
    orjson = None

try:
    import uvloop
except ImportError:  # pragma: no cover
    uvloop = None


def loads(data: bytes | str) -> Any:
    """Raises ValueError on bad JSON, like json.loads (orjson's error subclasses it)."""
    if orjson is not None:
        return orjson.loads(data)
    return json.loads(data)


def dumps(value: Any) -> str:
    if orjson is not None:
        try:
            return orjson.dumps(value).decode()
        except TypeError:  # integers beyond 64 bits, exotic keys
            pass
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def new_event_loop() -> asyncio.AbstractEventLoop:
    return uvloop.new_event_loop() if uvloop is not None else asyncio.new_event_loop()


def run(coroutine: Any) -> Any:
    if uvloop is not None:
        return uvloop.run(coroutine)
    return asyncio.run(coroutine)
