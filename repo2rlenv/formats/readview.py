"""What a read tool showed, with each harness's decoration removed.

Replay may only trust a file's content when the whole file was shown, so each cleaner
returns (content, complete) and says `complete=False` at the first sign of a partial
view: an offset or limit, a truncation notice, a line cap that may have been hit, a
gutter that does not start at line 1. Content is the shown lines joined by "\\n"; a
gutter hides whether the file ended with a newline, except where the harness numbers
the empty last line (Hermes), so consumers should compare modulo one final newline.
"""

from __future__ import annotations

import re

from repo2rlenv.formats.calls import Call
from repo2rlenv.formats.text import as_dict, as_int, as_str, remove_reminders, strip_gutter

Shown = tuple[str | None, bool]
_NOTHING: Shown = (None, False)

_CLAUDE_GUTTER = re.compile(r" *(\d+)(?:\t|→)")
_CLAUDE_LINE_CAP = 2000
_OPENCODE_GUTTER = re.compile(r"(\d+): ")
_OPENCODE_OLD_GUTTER = re.compile(r"(\d{5})\| ")
_HERMES_GUTTER = re.compile(r" *(\d+)\|")
_OPENHANDS_GUTTER = re.compile(r" *(\d+)\t")

_PI_TRAILER = re.compile(
    r"\n*(?:\[[^\]\n]*(?:Use offset=|more lines|limit)[^\]\n]*\]"
    r"|\.\.\. \(\d+ more lines? not shown[^)\n]*\))\s*$"
)
_OPENCODE_END = re.compile(
    r"\n*\((End of file - total \d+ lines?|Showing lines [^)\n]*|File has more lines[^)\n]*)\)\s*$"
)
_TAIL = 1024
_RESULT_ID = re.compile(r"\n\[result-id: [\w-]+\]\s*$")
"""A reference Claude Code 2.1.9x appends to a tool result (`[result-id: r19]`), on its
own line without a gutter: not file content, and left in it no read was ever whole."""
"""Trailers are searched for in the last KiB only: linear time on any output size."""
_CAT_N_HEADER = re.compile(r"Here's the result of running `cat -n` on [^\n]*:\n")


def _usable(call: Call) -> str | None:
    result = call.result
    if result is None or result.is_error:
        return None
    return result.text


def _no_window(call: Call, *keys: str) -> bool:
    """True when the call asked for no offset/limit/range (offset 0 or 1 = start)."""
    for key in keys:
        value = call.args.get(key)
        if value is None:
            continue
        if key in ("offset", "start_line") and as_int(value) in (0, 1):
            continue
        return False
    return True


def pi_read(call: Call) -> Shown:
    text = _usable(call)
    if text is None:
        return _NOTHING
    trailer = _PI_TRAILER.search(text, max(0, len(text) - _TAIL))
    if trailer is not None:
        return text[: trailer.start()], False
    return text, _no_window(call, "offset")


def claude_read(call: Call) -> Shown:
    if call.result is None or call.result.is_error:
        return _NOTHING
    data = as_dict(call.result.data)
    shown = as_dict(data.get("file"))
    if isinstance(shown.get("content"), str):
        start, count = as_int(shown.get("startLine")), as_int(shown.get("numLines"))
        total = as_int(shown.get("totalLines"))
        whole = start == 1 and count is not None and total is not None and count >= total
        return shown["content"], whole
    if data and data.get("type") not in (None, "text"):
        return _NOTHING  # image, notebook, "file unchanged since last read"
    text = call.result.text
    if text is None:
        return _NOTHING
    text, had_banner = remove_reminders(text)
    marker = _RESULT_ID.search(text, max(0, len(text) - _TAIL))
    text = text[: marker.start()] + "\n" if marker is not None else text
    if not text.strip():
        return ("", _no_window(call, "offset", "limit")) if had_banner else _NOTHING
    stripped = strip_gutter(text, _CLAUDE_GUTTER)
    if stripped is None:
        return _NOTHING
    content, first = stripped
    capped = content.count("\n") + 1 >= _CLAUDE_LINE_CAP
    return content, first == 1 and not capped and _no_window(call, "offset", "limit")


def opencode_read(call: Call) -> Shown:
    text = _usable(call)
    if text is None:
        return _NOTHING
    body = _tagged_body(text)
    if body is None:
        return _NOTHING
    end = _OPENCODE_END.search(body, max(0, len(body) - _TAIL))
    marker = end.group(1) if end else ""
    body = body[: end.start()] if end else body
    at_end = marker.startswith("End of file")
    if not body.strip("\n"):
        return ("", True) if marker == "End of file - total 0 lines" else _NOTHING
    stripped = strip_gutter(body, _OPENCODE_GUTTER) or strip_gutter(body, _OPENCODE_OLD_GUTTER)
    if stripped is None:
        return _NOTHING
    content, first = stripped
    clipped = "(line truncated to" in content
    return content, at_end and first == 1 and not clipped


def _tagged_body(text: str) -> str | None:
    """The text between <content> (new opencode) or <file> (old) and its closing tag.
    opencode 1.3 writes the first line on the tag's own line (`<content>1: {`)."""
    for tag in ("content", "file"):
        start = text.find(f"<{tag}>")
        stop = text.rfind(f"</{tag}>")
        if start >= 0 and stop > start:
            body = text[start + len(tag) + 2 : stop]
            return body.removeprefix("\n").removesuffix("\n")
    return None


def hermes_read(call: Call) -> Shown:
    if call.result is None or call.result.is_error:
        return _NOTHING
    data = as_dict(call.result.data)
    content = as_str(data.get("content"))
    if content is None or data.get("error"):
        return _NOTHING
    whole = data.get("truncated") is not True and _no_window(call, "offset", "limit")
    if content == "":
        return ("", whole) if as_int(data.get("total_lines")) == 0 else _NOTHING
    stripped = strip_gutter(content, _HERMES_GUTTER)
    if stripped is None:
        return _NOTHING
    shown, first = stripped
    return shown, whole and first == 1


def openhands_read(call: Call) -> Shown:
    """str_replace_editor `view` (OpenHands, SWE-agent): `cat -n` output behind a
    header; pty output turns newlines into CRLF, which is undone here."""
    text = _usable(call)
    if text is None:
        return _NOTHING
    text = text.replace("\r\n", "\n")
    header = _CAT_N_HEADER.match(text)
    if header is None:
        return _NOTHING
    body = text[header.end() :]
    clip = body.find("<response clipped>")
    if clip >= 0:
        body = body[:clip]
    stripped = strip_gutter(body.rstrip("\n"), _OPENHANDS_GUTTER)
    if stripped is None:
        return _NOTHING
    content, first = stripped
    return content, clip < 0 and first == 1 and call.args.get("view_range") is None


def nothing(call: Call) -> Shown:
    """Read tools of unknown harnesses: the shown text cannot be trusted as content."""
    return _NOTHING
