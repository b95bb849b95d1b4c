"""How each harness frames a command's output, and where it hides the exit code.

Each function takes the result text exactly as recorded and returns the output as the
user would have seen it, plus the exit code when the format states one. A code is only
ever read from an explicit marker, never inferred from the wording of the output.
"""

from __future__ import annotations

import re
from typing import Any

from repo2rlenv.formats.text import as_dict, as_int, as_str, loads_or_none, text_of

_TAIL = 1024
"""Trailers are searched for in the last KiB only: linear time on any output size."""
_OPENHANDS_EXIT = re.compile(r"\n?\[Command finished with exit code (-?\d+)\]\s*$")
_CODEX_HEADER = re.compile(
    r"\A(?P<head>(?:(?:Chunk ID|Wall time|Process exited with code|Process running with "
    r"session ID|Original token count|Exit code|Total output lines)[^\n]*\n)+)Output:\n?"
)
_CODEX_EXIT = re.compile(r"(?:Process exited with code|Exit code:) (-?\d+)")
_CODEX_COMMAND = re.compile(r"\ACommand: .*?\n(?=(?:Chunk ID|Wall time): )", re.S)
"""Codex Desktop puts the command before the header; a multi-line command spans lines,
so the line is taken up to the first header key. Without one it is plain output."""
_PI_EXIT = re.compile(r"\n*Command exited with code (-?\d+)\s*$")
_CLAUDE_EXIT = re.compile(r"\A(?:Error: )?Exit code (-?\d+)")
_SWE_AGENT_FOOTER = re.compile(
    r"\n*\(Open file: (?P<file>[^\n]*)\)\n\(Current directory: "
    r"(?P<cwd>[^\n]*)\)\n(?:bash-\$)?\s*$"
)


def openhands_observation(text: str) -> tuple[str, int | None, bool]:
    """OpenHands / SWE-smith observations: "OBSERVATION:\\n" prefix, an exit-code
    trailer for shell calls, and "ERROR:" for editor failures."""
    body = text.removeprefix("OBSERVATION:\n").removeprefix("OBSERVATION:")
    code: int | None = None
    match = _OPENHANDS_EXIT.search(body, max(0, len(body) - _TAIL))
    if match is not None:
        code = int(match.group(1))
        body = body[: match.start()]
    head = body.lstrip()
    failed = head.startswith(("ERROR:", "No replacement was performed"))
    return body, code, failed


def codex_output(raw: Any) -> tuple[str | None, int | None]:
    """function_call_output.output: a header block (Codex Desktop's "Command: ...",
    "Process exited with code N", "Exit code: N", "Wall time: ...") then "Output:";
    older rollouts store JSON {"output", "metadata": {"exit_code"}}; newer ones may store
    content parts."""
    if isinstance(raw, list | dict) and not isinstance(raw, str):
        decoded: Any = raw
    elif isinstance(raw, str):
        decoded = loads_or_none(raw) if raw.lstrip().startswith("{") else None
    else:
        return None, None
    if isinstance(decoded, dict) and ("output" in decoded or "metadata" in decoded):
        metadata = as_dict(decoded.get("metadata"))
        return as_str(decoded.get("output")), as_int(metadata.get("exit_code"))
    if decoded is not None and not isinstance(raw, str):
        return text_of(decoded), None
    text = raw if isinstance(raw, str) else ""
    command = _CODEX_COMMAND.match(text) if text.startswith("Command: ") else None
    if command is not None:
        text = text[command.end() :]
    header = _CODEX_HEADER.match(text)
    if header is None:
        return (raw if isinstance(raw, str) else text), None
    exit_match = _CODEX_EXIT.search(header.group("head"))
    return text[header.end() :], int(exit_match.group(1)) if exit_match else None


def pi_bash(text: str, is_error: bool) -> tuple[str, int | None]:
    """pi appends "Command exited with code N" on failure and nothing on success (exit
    0); "Command aborted" and timeouts carry no code."""
    match = _PI_EXIT.search(text, max(0, len(text) - _TAIL))
    if match is not None:
        return text[: match.start()], int(match.group(1))
    return text, (None if is_error else 0)


def claude_bash(text: str, data: Any, is_error: bool) -> tuple[str, int | None, bool]:
    """Claude Code: success keeps {stdout, stderr, interrupted} in toolUseResult (exit 0);
    failure is a plain string starting "Exit code N"."""
    structured = as_dict(data)
    if is_error:
        match = _CLAUDE_EXIT.match(text)
        return text, (int(match.group(1)) if match else None), True
    if structured and isinstance(structured.get("stdout"), str):
        stderr = as_str(structured.get("stderr")) or ""
        output = structured["stdout"] + (f"\n{stderr}" if stderr else "")
        interrupted = structured.get("interrupted") is True
        return output, (None if interrupted else 0), interrupted
    return text, None, False


def swe_agent_observation(text: str) -> tuple[str, str | None, str | None]:
    """SWE-agent (nebius rows) ends each observation with the open file and the shell's
    directory; both matter for the next command, neither is output."""
    match = _SWE_AGENT_FOOTER.search(text, max(0, len(text) - _TAIL))
    if match is None:
        return text, None, None
    open_file = match.group("file")
    return text[: match.start()], (None if open_file == "n/a" else open_file), match.group("cwd")


def hermes_result(content: str) -> tuple[str, int | None, bool, dict[str, Any] | None]:
    """Hermes tool messages are JSON strings: terminal {output, exit_code, error},
    patch {success, diff}, read_file {content, error}; others free text."""
    decoded = loads_or_none(content) if content.lstrip().startswith("{") else None
    if not isinstance(decoded, dict):
        return content, None, False, None
    failed = bool(decoded.get("error")) or decoded.get("success") is False
    output = as_str(decoded.get("output"))
    return (
        (output if output is not None else content),
        as_int(decoded.get("exit_code")),
        failed,
        decoded,
    )
