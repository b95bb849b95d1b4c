"""Two signs, in any format, that the text a session shows is not the whole story.

A *compaction summary*: the harness ran out of context, replaced the history with a
summary, and carried on. The summary is text a model wrote about earlier work, so it
is recorded as a system step, never as a user request, and the session is marked
compacted (its history before the summary cannot be replayed). Harnesses that mark
compaction with an entry of their own (pi `compaction`, Claude Code
`isCompactSummary`/`compact_boundary`, Codex `compacted`, opencode `compaction`
parts) are handled by their readers; these phrases catch the summary where it arrives
as a plain message (OpenAI-message and `{messages, meta}` exports, Hermes, and
terminus-2's handoff, whose "answers the other agent provided" restate the history).

A *harness cut*: the tool's output was shortened before the model saw it ("[... 4000
characters elided ...]", `<elided_chars>`, "output truncated"). What remains is a
partial view of a file, never the whole of it.
"""

from __future__ import annotations

import re

_SUMMARY = re.compile(
    r"\A\s*(?:"
    r"This session is being continued from a previous conversation that ran out of context"
    r"|The conversation history before this point was compacted into the following summary"
    r"|Another language model started to solve this problem and produced a summary"
    r"|\[CONTEXT COMPACTION\]"
    r"|Here are the answers the other agent provided"
    r")",
    re.IGNORECASE,
)
_CUT = re.compile(
    r"\[\.\.\. ?[\d,]+ (?:characters?|chars?|lines?|bytes?|tokens?) (?:elided|omitted|truncated)"
    r"|<elided_chars>|</?elided_chars|<response clipped>"
    r"|\boutput (?:was )?truncated\b|\btruncated (?:output|to \d+)"
    r"|\[(?:Output|output) truncated|\.\.\. ?\(truncated\)|Total output lines: \d+",
    re.IGNORECASE,
)


_CONTINUATION = re.compile(
    r"\A\s*(?:ok(?:ay)?[,.!]?\s+|please\s+)?"
    r"(?:continue|go on|keep going|proceed|resume|carry on)"
    r"(?:\s+(?:please|(?:from\s+)?where you left off|generating|the task))?[\s.!]*\Z",
    re.IGNORECASE,
)


def is_continuation(text: str) -> bool:
    """A bare "continue": after a compaction it asks for the summarised (untrusted) work,
    so it is no request a task could state."""
    return len(text) < 80 and _CONTINUATION.match(text) is not None


def is_compaction_summary(text: str) -> bool:
    """True when a message is a harness's summary of a compacted history."""
    return bool(text) and _SUMMARY.match(text[:400]) is not None


_CUT_WORDS = ("elided", "omitted", "truncated", "clipped", "total output lines")
"""One of these is in every `_CUT` notice. For ASCII text, where the case-insensitive
pattern means plain ASCII case, a notice is only possible when `text.lower()` holds one:
checked first at C speed, since the pattern itself is slow (a cat of a large file
scanned it end to end). Other text (where `re.IGNORECASE` also folds `ı` to `i`, `ſ` to
`s`) always goes to the pattern."""


def harness_cut(text: str | None) -> bool:
    """True when the output carries a harness's truncation marker."""
    if not text:
        return False
    if text.isascii():
        lowered = text.lower()
        if not any(word in lowered for word in _CUT_WORDS):
            return False
    return _CUT.search(text) is not None
