"""Tool calls of any harness -> CallFacts.

Harnesses name the same actions differently (pi `read {path}`, opencode
`read {filePath}`, Hermes `read_file {path}`, Claude Code `Read {file_path}`, codex
`exec_command {cmd}`); tools are recognised by family and argument keys, so a new
harness with the usual names works unchanged. A tool of no known family is read
conservatively: every absolute path in its arguments counts as touched.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from train.guard import wire
from train.guard.code import analyze_code
from train.guard.facts import CallFacts, ToolCall, Write
from train.guard.network import normalize_host, url_hosts
from train.guard.paths import paths_in_text, resolve
from train.guard.shell import analyze_shell

SHELL_TOOLS = frozenset(
    {
        "bash",
        "shell",
        "terminal",
        "exec_command",
        "shell_command",
        "execute_bash",
        "run_command",
        "run_shell_command",
        "bash_command",
        "run_terminal_cmd",
        "execute_command",
        "local_shell",
        "exec",
        "command",
        "run",
        "sh",
        "process",
    }
)
READ_TOOLS = frozenset(
    {
        "read",
        "read_file",
        "view",
        "open_file",
        "view_file",
        "cat",
        "notebookread",
        "read_many_files",
    }
)
WRITE_TOOLS = frozenset({"write", "write_file", "create_file", "create", "notebookedit"})
EDIT_TOOLS = frozenset(
    {
        "edit",
        "multiedit",
        "patch",
        "str_replace",
        "edit_file",
        "replace",
        "apply_diff",
        "search_replace",
        "insert",
        "replace_in_file",
    }
)
LIST_TOOLS = frozenset(
    {
        "ls",
        "list_dir",
        "list_directory",
        "glob",
        "grep",
        "search_files",
        "find",
        "rg",
        "list_files",
        "search",
        "find_files",
        "codebase_search",
    }
)
FETCH_TOOLS = frozenset(
    {
        "webfetch",
        "web_fetch",
        "fetch",
        "browse",
        "browser_navigate",
        "open_url",
        "http_request",
        "read_url",
        "curl",
        "browser",
    }
)
SEARCH_TOOLS = frozenset({"websearch", "web_search", "search_web", "google_search"})
EDITOR_TOOLS = frozenset({"str_replace_editor", "str_replace_based_edit_tool", "text_editor"})

PATH_KEYS = (
    "path",
    "filePath",
    "file_path",
    "absolute_path",
    "target_file",
    "file",
    "filename",
    "notebook_path",
    "dir",
    "directory",
    "dir_path",
)
CONTENT_KEYS = ("content", "file_text", "text", "contents", "new_source")
NEW_TEXT_KEYS = (
    "newText",
    "newString",
    "new_string",
    "new_str",
    "replace",
    "replacement",
    "new_text",
    "content",
)
CWD_KEYS = ("workdir", "cwd", "working_dir", "workDir", "directory")
COMMAND_KEYS = ("command", "cmd", "keystrokes", "script", "commands")
PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)


def family(name: str) -> str:
    lowered = name.lower().rsplit(".", 1)[-1].rsplit("__", 1)[-1]
    for fam, names in (
        ("shell", SHELL_TOOLS),
        ("read", READ_TOOLS),
        ("write", WRITE_TOOLS),
        ("edit", EDIT_TOOLS),
        ("list", LIST_TOOLS),
        ("fetch", FETCH_TOOLS),
        ("search", SEARCH_TOOLS),
        ("editor", EDITOR_TOOLS),
    ):
        if lowered in names:
            return fam
    return "apply_patch" if lowered == "apply_patch" else "other"


def _first(args: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = args.get(key)
        if value not in (None, ""):
            return value
    return None


def _command_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if (
            len(value) >= 3
            and value[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
            and value[1] in ("-c", "-lc", "-ec")
        ):
            return value[2]
        return shlex.join(value)
    return None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _edit_text(args: dict[str, Any]) -> str:
    parts = [v for k in NEW_TEXT_KEYS if isinstance(v := args.get(k), str)]
    edits = args.get("edits")
    for edit in edits if isinstance(edits, list) else []:
        if isinstance(edit, dict):
            parts.extend(v for k in NEW_TEXT_KEYS if isinstance(v := edit.get(k), str))
    return "\n".join(parts)


def call_facts(call: ToolCall, workdir: str) -> CallFacts:
    """Facts for a call whose arguments parsed to an object."""
    args = call.args or {}
    fam = family(call.name)
    cwd_value = _first(args, CWD_KEYS)
    cwd = resolve(cwd_value, workdir) if isinstance(cwd_value, str) else workdir
    facts = CallFacts(texts=[call.arguments])
    path_value = _first(args, PATH_KEYS)
    path = resolve(path_value, cwd) if isinstance(path_value, str) else None
    if fam == "shell":
        command = _command_text(_first(args, COMMAND_KEYS))
        if command is not None:
            facts.merge(analyze_shell(command, cwd))
            return facts
    if fam == "editor":
        verb = args.get("command")
        fam = {"view": "read", "create": "write"}.get(verb, "edit") if path else "other"
    if fam == "read" and path:
        facts.reads.append(path)
    elif fam == "write" and path:
        content = _first(args, CONTENT_KEYS)
        facts.writes.append(Write(path, content if isinstance(content, str) else None))
    elif fam == "edit" and path:
        facts.writes.append(Write(path, _edit_text(args)))
    elif fam == "apply_patch":
        patch = _first(args, ("input", "patch", "diff"))
        _apply_patch(patch if isinstance(patch, str) else call.arguments, cwd, facts)
    elif fam == "list":
        facts.reads.append(path or cwd)
    elif fam in ("fetch", "search"):
        facts.network = True
        for text in _strings(args):
            facts.hosts.extend(url_hosts(text))
        url = args.get("url") or args.get("uri")
        if isinstance(url, str) and "://" not in url and "." in url.split("/", 1)[0]:
            facts.hosts.append(normalize_host(url.split("/", 1)[0]))
    else:
        _other(args, facts)
    return facts


def _apply_patch(text: str, cwd: str, facts: CallFacts) -> None:
    current: Write | None = None
    added: list[str] = []
    for line in text.splitlines():
        match = PATCH_FILE.match(line)
        if match:
            if current is not None:
                facts.writes.append(Write(current.path, "\n".join(added)))
            verb, target, moved = match.groups()
            added, current = [], None
            if verb == "Delete":
                facts.deletes.append(resolve(target.strip(), cwd))
            elif target or moved:
                current = Write(resolve((target or moved).strip(), cwd))
        elif current is not None and line.startswith("+"):
            added.append(line[1:])
    if current is not None:
        facts.writes.append(Write(current.path, "\n".join(added)))


def _other(args: dict[str, Any], facts: CallFacts) -> None:
    for text in _strings(args):
        facts.touched.extend(paths_in_text(text))


def parse_arguments(raw: Any) -> tuple[str, dict[str, Any] | None]:
    """(raw text, parsed object or None): OpenAI sends JSON text, Anthropic an object."""
    if isinstance(raw, dict):
        return wire.dumps(raw), raw
    if not isinstance(raw, str):
        return wire.dumps(raw), None
    text = raw.strip() or "{}"
    try:
        value = wire.loads(text)
    except ValueError:
        return raw, None
    return raw, value if isinstance(value, dict) else None


__all__ = ["analyze_code", "call_facts", "family", "parse_arguments"]
