"""Recognising error output: what a failed command printed instead of an answer.

Two strengths. `FAILURE_LINE` is a command failing: a shell or tool complaint, a
traceback, a harness's "Exit code N" banner; a qa answer is never taken from output
holding one. `ERROR_LINE` adds any line that reports an error (`error:`, `fatal:`,
`Exception:`…); validate uses it to tell that a workspace file or answer came from
error text rather than data.
"""

from __future__ import annotations

import re

_FAILURE = (
    r"Exit code \d+"
    r"|Traceback \(most recent call last\)"
    r"|(?:bash|sh|zsh|cat|ls|grep|egrep|head|tail|wc|cut|sort|awk|cd|python3?|pytest)"
    r"(?:: line \d+)?: .*"
    r"|.*(?:No such file or directory|command not found|Permission denied"
    r"|is not recognized as an internal or external command|Cannot find path"
    r"|cannot access|cannot open)"
)
FAILURE_LINE = re.compile(rf"^\s*(?:{_FAILURE}).*$", re.MULTILINE)
ERROR_LINE = re.compile(
    rf"^\s*(?:{_FAILURE}|.*(?:fatal:|error:|Error:|ERROR:|Exception:|not found)).*$",
    re.MULTILINE,
)


def failure_lines(text: str) -> list[str]:
    return [m.group(0) for m in FAILURE_LINE.finditer(text)]


def error_lines(text: str) -> list[str]:
    return [m.group(0) for m in ERROR_LINE.finditer(text)]
