"""JSON decoding for records: orjson's speed when it is installed, the standard library's
exact answers always.

Reading the JSON is most of what mining a session costs, and orjson parses it about
twice as fast. It is an optional dependency (the `fast` and `dev` extras), so the
standard library stays the reference: orjson's answer is used only where it is the
same value `json.loads` would give. orjson refuses what the standard library accepts
beyond strict JSON (NaN, Infinity, out-of-range floats, lone surrogates), so those
fall back; the one case where it answers differently is an integer literal outside
64 bits, which it turns into a float. Such a literal has at least 20 digits (19 after
a minus sign), so text holding a digit run that long, as a number or not, goes to the
standard library too.
"""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - exercised where the optional extra is absent
    orjson = None

NOT_JSON: Any = object()
"""Returned by `decode` for text that is not one JSON value."""

_DIGITS = bytes(
    0x30 if 0x30 <= byte <= 0x39 else byte if byte in b"-." else 0x20 for byte in range(256)
)
"""Every digit becomes `0`, minus and dot stay, anything else becomes a space."""
_RUN = b"0" * 19
_WIDE_POSITIVE = b" " + _RUN + b"0"
_WIDE_NEGATIVE = b"-" + _RUN


def _wide_integer(data: bytes) -> bool:
    """True when `data` may hold an integer literal orjson cannot keep exact (a digit
    run of 20 after a non-digit that is not a dot, or of 19 after a minus)."""
    shape = data.translate(_DIGITS)
    if _RUN not in shape:  # one search that nearly always settles it
        return False
    return _WIDE_POSITIVE in shape or _WIDE_NEGATIVE in shape or shape.startswith(_RUN + b"0")


def decode_fast(data: bytes) -> Any:
    """orjson's value for UTF-8 `data` where it is exact, else `NOT_JSON` (including when
    orjson is absent or refuses it: the caller then decodes the text with `decode`)."""
    if orjson is None or _wide_integer(data):
        return NOT_JSON
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return NOT_JSON


def decode(text: str) -> Any:
    """The JSON value of `text`, exactly as `json.loads` gives it, or `NOT_JSON`. Never
    raises: nesting deep enough to exhaust the recursion limit is `NOT_JSON` too."""
    if orjson is not None:
        value = decode_fast(text.encode("utf-8", "surrogatepass"))
        if value is not NOT_JSON:
            return value
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return NOT_JSON
