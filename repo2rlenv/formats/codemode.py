"""Codex code-mode (codex-tui 0.144+): the model writes JavaScript for one `exec` custom
tool, and that script calls the real tools (`tools.exec_command({cmd, workdir})`,
`tools.apply_patch(patch)`); whatever the script passes to `text(...)` comes back as
the `exec` call's output, under a "Script completed / Wall time / Output:" header.

Replay needs the nested calls, not the script. The script is parsed with tree-sitter's
JavaScript grammar (never run: it is data from a stranger), and only arguments that are
literals, or constants bound to literals, are taken; anything computed at run time
leaves that argument unknown, so the call maps to no workspace change it cannot prove.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import tree_sitter_javascript
from tree_sitter import Language, Node, Parser

from repo2rlenv.formats.text import loads_or_none, text_of

_LANGUAGE = Language(tree_sitter_javascript.language())
_MAX_SCRIPT = 64 * 1024
"""A cell longer than this is not parsed (its calls stay one unknown `exec`). Real cells
are a few KiB (the largest of 153 in a published rollout: 31 KiB); tree-sitter's error
recovery on hostile text costs about a second per 64 KiB and grows faster than linearly."""
_HEADER = re.compile(
    r"\A(?P<status>Script (?P<state>completed|failed|running)[^\n]*)\n"
    r"(?:(?:Wall time|Chunk ID|Original token count)[^\n]*\n)*"
    r"(?:Output:\n?)?"
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}

UNKNOWN = object()
"""An argument whose value is only known when the script runs."""


@dataclass(frozen=True)
class NestedCall:
    """One `tools.NAME(...)` call inside a cell, with its literal arguments."""

    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class CellOutput:
    """An `exec` cell's output: what `text(...)` printed, and how the script ended."""

    text: str
    state: str | None
    """"completed", "failed", "running" (yielded, ends in a later `wait`) or None."""
    cell_id: str | None = None
    """The id a yielded cell is waited on by."""


def nested_calls(script: str) -> list[NestedCall] | None:
    """The `tools.*` calls of a cell in source order, or None when the text is not a
    script (too large, or so broken that no call could be found)."""
    if not isinstance(script, str) or len(script) > _MAX_SCRIPT:
        return None
    tree = Parser(_LANGUAGE).parse(script.encode("utf-8", "surrogatepass"))
    constants = _constants(tree.root_node)
    calls: list[NestedCall] = []
    for node in _walk(tree.root_node):
        if node.type != "call_expression":
            continue
        name = _tool_name(node.child_by_field_name("function"))
        if name is None:
            continue
        arguments = node.child_by_field_name("arguments")
        values = [c for c in arguments.named_children if c.type != "comment"] if arguments else []
        calls.append(NestedCall(name, _arguments(name, values, constants)))
    return calls


def cell_output(raw: Any) -> CellOutput:
    """Strip the cell header; the state says whether the script ran to its end."""
    text = raw if isinstance(raw, str) else text_of(raw)
    match = _HEADER.match(text)
    if match is None:
        return CellOutput(text, None)
    body = text[match.end() :]
    if not isinstance(raw, str):
        body = body.removeprefix("\n")  # content parts are joined with a newline
    cell = re.search(r"cell ID (\S+)", match.group("status"))
    return CellOutput(body, match.group("state"), cell.group(1) if cell else None)


def command_result(body: str) -> tuple[str, int | None]:
    """A script that printed `JSON.stringify(result)` shows the tool's own
    {output, exit_code}; one that printed `result.output` shows only the text."""
    decoded = loads_or_none(body) if body.lstrip().startswith("{") else None
    if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
        code = decoded.get("exit_code")
        exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
        return decoded["output"], exit_code
    return body, None


# -- the tree ----------------------------------------------------------------------------
def _walk(root: Node) -> list[Node]:
    """Nodes in source order, iteratively (a deep script must not hit recursion limits)."""
    out: list[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))
    return out


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _tool_name(node: Node | None) -> str | None:
    """`tools.exec_command` or `tools["exec_command"]` -> "exec_command"."""
    if node is None or node.type not in ("member_expression", "subscript_expression"):
        return None
    target = node.child_by_field_name("object")
    if target is None or target.type != "identifier" or _text(target) != "tools":
        return None
    if node.type == "member_expression":
        prop = node.child_by_field_name("property")
        return _text(prop) if prop is not None else None
    index = node.child_by_field_name("index")
    value = _literal(index, {}) if index is not None else UNKNOWN
    return value if isinstance(value, str) else None


def _constants(root: Node) -> dict[str, Any]:
    """Names bound once to a literal (`const patch = "..."`); a name bound twice or
    assigned later is left out, since its value at the call is not known."""
    seen: dict[str, int] = {}
    values: dict[str, Any] = {}
    for node in _walk(root):
        if node.type == "variable_declarator":
            name = node.child_by_field_name("name")
            if name is None or name.type != "identifier":
                continue
            key = _text(name)
            seen[key] = seen.get(key, 0) + 1
            value = node.child_by_field_name("value")
            if value is not None:
                values[key] = value
        elif node.type in ("assignment_expression", "augmented_assignment_expression"):
            left = node.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                seen[_text(left)] = 2
    resolved: dict[str, Any] = {}
    for key, value in values.items():
        if seen.get(key) == 1:
            literal = _literal(value, resolved)
            if literal is not UNKNOWN:
                resolved[key] = literal
    return resolved


def _arguments(name: str, values: list[Node], constants: dict[str, Any]) -> dict[str, Any]:
    if not values:
        return {}
    first = _literal(values[0], constants)
    if isinstance(first, dict):
        return {k: v for k, v in first.items() if v is not UNKNOWN}
    if isinstance(first, str):
        # apply_patch takes the patch text itself; other tools name their one argument.
        return {"input": first} if name == "apply_patch" else {"arg": first}
    return {}


def _literal(node: Node, constants: dict[str, Any], depth: int = 0) -> Any:
    """The value of a literal expression, or UNKNOWN."""
    if depth > 64:
        return UNKNOWN
    kind = node.type
    if kind == "parenthesized_expression" and node.named_child_count == 1:
        return _literal(node.named_children[0], constants, depth + 1)
    if kind == "string":
        return _string(node)
    if kind == "template_string":
        if any(c.type == "template_substitution" for c in node.named_children):
            return UNKNOWN
        return _string(node)
    if kind == "number":
        number = loads_or_none(_text(node))
        return number if isinstance(number, int | float) else UNKNOWN
    if kind in ("true", "false"):
        return kind == "true"
    if kind == "null":
        return None
    if kind == "identifier":
        return constants.get(_text(node), UNKNOWN)
    if kind == "binary_expression" and _text(node.child_by_field_name("operator")) == "+":
        left = _literal(node.child_by_field_name("left"), constants, depth + 1)
        right = _literal(node.child_by_field_name("right"), constants, depth + 1)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        return UNKNOWN
    if kind == "array":
        items = [_literal(c, constants, depth + 1) for c in node.named_children]
        return UNKNOWN if any(i is UNKNOWN for i in items) else items
    if kind == "object":
        return _object(node, constants, depth)
    if kind == "call_expression":
        return _joined(node, constants, depth)
    return UNKNOWN


def _object(node: Node, constants: dict[str, Any], depth: int) -> Any:
    out: dict[str, Any] = {}
    for child in node.named_children:
        if child.type == "shorthand_property_identifier":
            out[_text(child)] = constants.get(_text(child), UNKNOWN)
            continue
        if child.type != "pair":
            continue
        key_node, value_node = child.child_by_field_name("key"), child.child_by_field_name("value")
        if key_node is None or value_node is None:
            continue
        key = _string(key_node) if key_node.type == "string" else _text(key_node)
        if isinstance(key, str):
            out[key] = _literal(value_node, constants, depth + 1)
    return out


def _joined(node: Node, constants: dict[str, Any], depth: int) -> Any:
    """`[...lines].join("\\n")`: how models often build a patch."""
    function = node.child_by_field_name("function")
    arguments = node.child_by_field_name("arguments")
    if function is None or arguments is None or function.type != "member_expression":
        return UNKNOWN
    prop = function.child_by_field_name("property")
    if prop is None or _text(prop) != "join":
        return UNKNOWN
    items = _literal(function.child_by_field_name("object"), constants, depth + 1)
    args = arguments.named_children
    separator = _literal(args[0], constants, depth + 1) if args else ","
    if not isinstance(items, list) or not isinstance(separator, str):
        return UNKNOWN
    if not all(isinstance(i, str) for i in items):
        return UNKNOWN
    return separator.join(items)


def _string(node: Node) -> str | Any:
    """A string or template literal's value, escapes decoded as JavaScript does."""
    parts: list[str] = []
    for child in node.named_children:
        if child.type == "string_fragment":
            parts.append(_text(child))
        elif child.type == "escape_sequence":
            decoded = _escape(_text(child))
            if decoded is None:
                return UNKNOWN
            parts.append(decoded)
        elif child.type != "comment":
            return UNKNOWN
    return "".join(parts)


def _escape(seq: str) -> str | None:
    body = seq[1:]
    if not body:
        return None
    if body[0] in _ESCAPES and not (body[0] == "0" and len(body) > 1):
        return _ESCAPES[body[0]]
    if body[0] in "xu":
        digits = body[1:].strip("{}")
        try:
            return chr(int(digits, 16))
        except (ValueError, OverflowError):
            return None
    if body[0] in "\r\n\u2028\u2029":
        return ""  # a line continuation
    return body[0] if len(body) == 1 else None
