"""The order an instance's pytest node ids run in: the order pytest collects them.

SWE-bench runs an instance's test files whole (`pytest -rA <files>`), so its tests run
in definition order. A row lists FAIL_TO_PASS first and then PASS_TO_PASS in no file
order, and pytest runs node ids given on the command line in the order given. Tests
that share state across a session see the difference: Sphinx's test apps of one test
root reuse a pickled environment, so sphinx-10449's `test_autodoc_typehints_description`
read the text the FAIL_TO_PASS test had built first under another configuration and
failed on the reference (measured), where SWE-bench's file order passes it.

So the verifier's targets are put in definition order: files in the order they first
occur, then each node by where its function (or its class, then the method) is defined
in the file's text. A node whose definition is not found keeps its place after the
found ones of its file (a stable sort); nothing is dropped or added.
"""

from __future__ import annotations

import re

UNKNOWN = 1 << 62
"""The offset of a node whose definition is not found: after every found one."""


def _offset(text: str, parts: list[str]) -> int:
    """Where the definition of `Class::...::function` (or `function`) starts in `text`."""
    start = 0
    for depth, name in enumerate(parts):
        keyword = r"(?:async\s+)?def" if depth == len(parts) - 1 else "class"
        indent = "" if depth == 0 else r"[ \t]+"
        found = re.compile(rf"^{indent}{keyword}\s+{re.escape(name)}\b", re.M).search(text, start)
        if found is None:
            return UNKNOWN
        start = found.start()
    return start


def in_definition_order(nodes: list[str], files: dict[str, str]) -> list[str]:
    """`nodes` (`path::[Class::]function`, no parameters) in pytest's collection order
    of their files' text; the order of the files is that of their first node."""
    rank: dict[str, int] = {}
    keys: list[tuple[int, int]] = []
    for node in nodes:
        path, _, rest = node.partition("::")
        rank.setdefault(path, len(rank))
        text = files.get(path)
        offset = _offset(text, rest.split("::")) if text is not None and rest else UNKNOWN
        keys.append((rank[path], offset))
    order = sorted(range(len(nodes)), key=lambda i: keys[i])
    return [nodes[i] for i in order]
