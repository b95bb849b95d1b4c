"""Static evaluation of the obfuscation layers agents (and attackers) wrap commands in.

Nothing is executed: `printf`/`echo -e` escapes, base64, hex (`xxd -r -p`) and `rev`
applied to literal text are computed, `$(...)`/backticks whose body is such a pipeline
are replaced by their output, and simple `NAME=value` variables are substituted. What
cannot be computed stays as it is, and the rules still see the raw words.
"""

from __future__ import annotations

import base64
import binascii
import re

ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{4}|0[0-7]{0,3}|[0-7]{1,3}|.)", re.S)
SIMPLE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "e": "\x1b",
    "'": "'",
    '"': '"',
    " ": " ",
}
FORMAT = re.compile(r"%(?:[-+ #0]*\d*(?:\.\d+)?)([sbdicxXoufgeE%])")
GLOB_HINT = re.compile(r"[*?\[]")
VAR = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
MAX_OUTPUT = 1 << 16


def decode_escapes(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xu":
            return chr(int(code[1:], 16))
        if code[0].isdigit():
            return chr(int(code, 8) & 0xFF)
        return SIMPLE_ESCAPES.get(code, "\\" + code)

    return ESCAPE.sub(one, text)


def printf_output(args: list[str]) -> str:
    """What `printf FORMAT ARGS...` prints. As in the shell, the format is used again
    while arguments are left (`printf '%s\\n' a b` prints two lines)."""
    if not args:
        return ""
    fmt, values = args[0], list(args[1:])
    consumed = 0

    def field(match: re.Match[str]) -> str:
        nonlocal consumed
        kind = match.group(1)
        if kind == "%":
            return "%"
        consumed += 1
        value = values.pop(0) if values else ""
        return decode_escapes(value) if kind == "b" else value

    chunks = [decode_escapes(FORMAT.sub(field, fmt))]
    while values and consumed and len(chunks) < MAX_OUTPUT:
        chunks.append(decode_escapes(FORMAT.sub(field, fmt)))
    return "".join(chunks)


def echo_output(args: list[str]) -> str:
    interpret = False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        interpret = interpret or "e" in args[0]
        args = args[1:]
    text = " ".join(args)
    return decode_escapes(text) if interpret else text


def base64_decode(text: str) -> str | None:
    cleaned = re.sub(r"\s+", "", text)
    if not cleaned:
        return None
    try:
        raw = base64.b64decode(cleaned + "=" * (-len(cleaned) % 4), validate=False)
    except (binascii.Error, ValueError):
        return None
    return raw.decode("utf-8", errors="replace")


def hex_decode(text: str) -> str | None:
    cleaned = re.sub(r"\s+|\\x|0x", "", text)
    try:
        return bytes.fromhex(cleaned).decode("utf-8", errors="replace")
    except ValueError:
        return None


def is_decoder(name: str | None, args: list[str]) -> bool:
    if name == "base64":
        return any(a in ("-d", "--decode", "-D") or re.fullmatch(r"-\w*d\w*", a) for a in args)
    if name == "xxd":
        return "-r" in args or any(re.fullmatch(r"-r\w*", a) for a in args)
    return name in ("rev",)


def apply_filter(name: str | None, args: list[str], text: str) -> str | None:
    """The output of a decoding filter fed `text`; None when not computable."""
    if name == "base64":
        return base64_decode(text)
    if name == "xxd":
        return hex_decode(text)
    if name == "rev":
        return "\n".join(line[::-1] for line in text.split("\n"))
    return None


def produce(name: str | None, args: list[str]) -> str | None:
    """The output of a command that only prints its arguments."""
    if name == "printf":
        return printf_output(args)
    if name == "echo":
        return echo_output(args)
    return None


def substitute_vars(word: str, variables: dict[str, str]) -> str:
    if "$" not in word or not variables:
        return word

    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return variables.get(name, match.group(0))

    return VAR.sub(one, word)


def variable_names(word: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in VAR.finditer(word)]


def substitutions(word: str) -> list[tuple[int, int, str]]:
    """(start, end, body) of each top-level `$(...)` or backtick span in `word`."""
    out: list[tuple[int, int, str]] = []
    i = 0
    while i < len(word):
        if word.startswith("$(", i) and not word.startswith("$((", i):
            depth, j = 1, i + 2
            while j < len(word) and depth:
                depth += {"(": 1, ")": -1}.get(word[j], 0)
                j += 1
            if depth == 0:
                out.append((i, j, word[i + 2 : j - 1]))
            i = j
        elif word[i] == "`":
            j = word.find("`", i + 1)
            if j == -1:
                break
            out.append((i, j + 1, word[i + 1 : j]))
            i = j + 1
        else:
            i += 1
    return out


def escaped_variant(word: str) -> str | None:
    """`$'\\x2ftests'` reaches the parser as `$\\x2ftests`: decode it."""
    if "\\" not in word:
        return None
    decoded = decode_escapes(word[1:] if word.startswith("$\\") else word)
    return decoded if decoded != word else None


def clip(text: str) -> str:
    return text[:MAX_OUTPUT]
