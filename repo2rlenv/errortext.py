"""Recognising a failed command's output: a shell or tool complaint, a traceback, a
harness's "Exit code N" banner. A qa answer is never taken from output holding one, and
validate flags a workspace file or a qa answer that came from one.

Lines that merely report an error (`error: …`, `ERROR …`) are not matched: logs and
test fixtures hold them as data, and counting them is a fair question.
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


def failure_lines(text: str) -> list[str]:
    return [m.group(0) for m in FAILURE_LINE.finditer(text)]
