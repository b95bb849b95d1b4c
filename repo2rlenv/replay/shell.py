"""What a shell command did to files, where that can be told from its text alone.

Heredoc writes (`cat > f <<'EOF'`), `printf`/`echo` redirections, `rm`, `mv`, `cp`,
`touch`, `mkdir` and `cd` are understood. A command whose effect on a file cannot be
known (`sed -i f`, `python gen.py > f`) marks that file unknown; commands that are
known not to write (ls, cat, grep, pytest, git status...) change nothing; anything else
is *opaque*: it may have changed files, and replay records that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

READ_ONLY = {
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "pwd",
    "echo",
    "printf",
    "tree",
    "stat",
    "file",
    "which",
    "env",
    "sort",
    "uniq",
    "cut",
    "awk",
    "diff",
    "du",
    "df",
    "nl",
    "less",
    "more",
    "true",
    "false",
    "test",
    "[",
    "date",
    "whoami",
    "id",
    "uname",
    "sleep",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "md5sum",
    "sha256sum",
    "jq",
    "xxd",
    "od",
    "python3 --version",
    "node",
    "cd",
    "export",
    "set",
    "type",
    "command",
    "history",
    "clear",
}
CHECK_RUNNERS = ("pytest", "py.test", "unittest", "tox", "nox")
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_SEPARATORS = {"&&", "||", ";", "|", "&", ";;", "|&"}
_REDIRECTS = {">", ">>", "1>", "1>>", "&>", "&>>", ">|"}


@dataclass
class FileEffect:
    op: str  # write | append | delete | unknown | copy | move | touch | cd
    path: str
    content: str | None = None
    source: str | None = None


@dataclass
class CommandEffects:
    effects: list[FileEffect] = field(default_factory=list)
    opaque: bool = False
    words: list[list[str]] = field(default_factory=list)


def _split_heredocs(text: str) -> tuple[list[str], dict[str, tuple[str, bool]]]:
    """Lines of the command with heredoc bodies cut out; bodies keyed by a placeholder."""
    lines = text.split("\n")
    if "<<" not in text:
        return lines, {}  # the common case: no line can open a heredoc
    out: list[str] = []
    bodies: dict[str, tuple[str, bool]] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        pending = list(_HEREDOC.finditer(line))
        for match in pending:
            strip_tabs, quote, delimiter = match.group(1), match.group(2), match.group(3)
            body: list[str] = []
            while index < len(lines):
                candidate = lines[index].lstrip("\t") if strip_tabs else lines[index]
                index += 1
                if candidate == delimiter:
                    break
                body.append(candidate)
            else:
                return [*out, line], bodies  # unterminated heredoc: leave it opaque
            key = f"__HEREDOC_{len(bodies)}__"
            bodies[key] = ("\n".join(body) + "\n", bool(quote))
            line = line.replace(match.group(0), f"<< {key}", 1)
        out.append(line)
    return out, bodies


_PLAIN = re.compile(r"[^'\"\\$`<>|&;#(){}*?\[\]~]*")
_LEX = re.compile(
    r"""(?P<space>\s+)
    |(?P<comment>\#[^\n]*)
    |(?P<op>&&|\|\||;;|\|&|&>>|&>|[0-9]?>>|[0-9]?>\||[0-9]?>|<<-?|<|[|;&])
    |(?P<word>(?:[^\s'"\\|;&<>]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+)""",
    re.VERBOSE,
)
_QUOTED = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)|([^'"\\]+)""")


def _unquote(word: str) -> str:
    if "'" not in word and '"' not in word and "\\" not in word:
        return word  # nothing quoted or escaped: the word is its own value
    parts = []
    for single, double, escaped, bare in _QUOTED.findall(word):
        if double:
            parts.append(re.sub(r'\\(["\\$`])', r"\1", double))
        else:
            parts.append(single or escaped or bare)
    return "".join(parts)


def _tokens(line: str) -> list[str] | None:
    """Shell words and operators of one line (POSIX quoting), or None when a quote is
    left open. A regular-expression lexer: shlex gives the same words, several times
    slower. `findall` scans like a tokenizer but steps over what no token matches (an
    open quote), so the matched text must add up to the whole line."""
    if _PLAIN.fullmatch(line):
        return line.split()
    found = _LEX.findall(line)
    if sum(map(len, map("".join, found))) != len(line):
        return None
    return [op or _unquote(word) for _space, _comment, op, word in found if op or word]


def _segments(tokens: list[str]) -> list[list[str]]:
    segments, current = [], []
    for token in tokens:
        if token in _SEPARATORS:
            if current:
                segments.append(current)
            current = []
        else:
            current.append(token)
    if current:
        segments.append(current)
    return segments


def _printf(fmt: str, args: list[str]) -> str | None:
    if "%" in fmt.replace("%%", "") and not re.fullmatch(r"(?:[^%]|%%|%s)*", fmt):
        return None

    def unescape(value: str) -> str:
        return (
            value.replace("\\\\", "\0")
            .replace("\\n", "\n")
            .replace("\\t", "\t")
            .replace("\0", "\\")
        )

    fmt = unescape(fmt)
    slots = fmt.count("%s") - fmt.count("%%s")
    if slots == 0:
        return fmt.replace("%%", "%")
    chunks, args = [], list(args) or [""]
    while args:
        take, args = args[:slots], args[slots:]
        take += [""] * (slots - len(take))
        chunks.append(fmt.replace("%%", "\0") % tuple(take))
    return "".join(chunks).replace("\0", "%")


def _segment_effects(
    words: list[str], raw: str, bodies: dict[str, tuple[str, bool]], result: CommandEffects
) -> None:
    target, append, heredoc = None, False, None
    plain: list[str] = []
    iterator = iter(range(len(words)))
    for i in iterator:
        word = words[i]
        if word in _REDIRECTS and i + 1 < len(words):
            target, append = words[i + 1], word.endswith(">>")
            next(iterator, None)
        elif word == "<<" and i + 1 < len(words):
            heredoc = bodies.get(words[i + 1])
            next(iterator, None)
        elif word in {"2>", "2>>", "<"} and i + 1 < len(words):
            next(iterator, None)
        else:
            plain.append(word)
    if not plain:
        return
    name, args = plain[0].rsplit("/", 1)[-1], plain[1:]
    result.words.append(plain)
    expands = "$" in raw or "`" in raw
    if target is not None and target not in {"/dev/null", "/dev/stderr", "/dev/stdout"}:
        content: str | None = None
        if name == "cat" and heredoc is not None and not args:
            body, quoted = heredoc
            content = body if quoted or not ("$" in body or "`" in body) else None
        elif name == "printf" and args and not expands:
            content = _printf(args[0], args[1:])
        elif name == "echo" and not expands:
            flags = [a for a in args if a in {"-n", "-e", "-ne", "-en"}]
            text = " ".join(a for a in args if a not in flags)
            if any("e" in f for f in flags):
                text = _printf(text.replace("%", "%%"), []) or text
            content = text if any("n" in f for f in flags) else text + "\n"
        op = "append" if append else "write"
        result.effects.append(FileEffect(op if content is not None else "unknown", target, content))
        if content is None and name not in READ_ONLY:
            result.opaque = True
        return
    if name == "cd":
        result.effects.append(FileEffect("cd", args[0] if args else ""))
    elif name == "rm":
        result.effects += [FileEffect("delete", a) for a in args if not a.startswith("-")]
    elif name in {"mv", "cp"}:
        operands = [a for a in args if not a.startswith("-")]
        if len(operands) == 2:
            result.effects.append(
                FileEffect("move" if name == "mv" else "copy", operands[1], source=operands[0])
            )
        else:
            result.opaque = True
    elif name == "touch":
        result.effects += [FileEffect("touch", a) for a in args if not a.startswith("-")]
    elif name == "mkdir":
        return
    elif name == "sed" and any(a.startswith("-i") for a in args):
        operands = [a for a in args if not a.startswith("-")]
        scripted = any(a in {"-e", "-f"} for a in args)
        result.effects += [FileEffect("unknown", a) for a in operands[0 if scripted else 1 :]]
    elif (
        (
            name == "git"
            and args
            and args[0]
            in {
                "status",
                "diff",
                "log",
                "show",
                "branch",
                "rev-parse",
                "remote",
                "ls-files",
                "blame",
            }
        )
        or (name == "find" and not {"-delete", "-exec", "-execdir"} & set(args))
        or is_check(plain)
        or name in READ_ONLY
    ):
        return
    else:
        result.opaque = True


def command_effects(command: str) -> CommandEffects:
    """Effects of one recorded command, as far as its text tells."""
    result = CommandEffects()
    if not isinstance(command, str) or len(command) > 1_000_000:
        result.opaque = True
        return result
    lines, bodies = _split_heredocs(command)
    for line in lines:
        tokens = _tokens(line)
        if tokens is None:
            result.opaque = True
            continue
        for segment in _segments(tokens):
            if segment and segment[0] in {"bash", "sh"} and "-c" in segment:
                inner = segment[segment.index("-c") + 1 :]
                if inner:
                    nested = command_effects(inner[0])
                    result.effects += nested.effects
                    result.opaque |= nested.opaque
                    result.words += nested.words
                continue
            _segment_effects(segment, line, bodies, result)
    return result


def is_check(words: list[str]) -> bool:
    """A command that runs tests: what repair and extend tasks use as their verifier."""
    if not words:
        return False
    head = words[0].rsplit("/", 1)[-1]
    if head in {"pytest", "py.test"}:
        return True
    if head.startswith("python") and len(words) >= 3 and words[1] == "-m":
        return words[2] in {"pytest", "unittest"}
    return False
