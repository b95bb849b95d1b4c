"""Semantic rules: is the task *about* something real? Judged from the files alone, on
any task folder (ours or foreign), before any container runs.

The structural rules in `static_rules` catch a task that is broken or leaks; these catch
a task that is well-formed but garbage: an instruction that is a harness's compaction
summary or names the author's home folder, a workspace file whose name is a Windows
path, a qa answer read off an error message, a reference that changes nothing the
verifier looks at. Each is registered with `static_check`, like every static rule, and
documented in docs/gates.md.
"""

from __future__ import annotations

import ast
import json
import posixpath
import re
import shlex
from collections.abc import Iterator

from repo2rlenv.bundle import TaskTree
from repo2rlenv.errortext import error_lines
from repo2rlenv.pysource import parse_python
from repo2rlenv.validate.findings import Finding
from repo2rlenv.validate.static_rules import static_check

MAX_INSTRUCTION_CHARS = 8000
"""A request a person types, or a repair task's 15-line failure excerpt plus two
sentences, stays well under this (the bundled examples: < 1 KB; SWE-bench problem
statements: a few KB); the compaction summary that slipped through was 14.5 KB."""

COMPACTION = re.compile(
    r"being continued from a previous conversation"
    r"|ran out of context"
    r"|conversation (?:history )?(?:before this point )?(?:was|has been) "
    r"(?:compacted|summari[sz]ed)"
    r"|summary of (?:the|our) (?:previous|earlier|prior) conversation"
    r"|produced a summary of its thinking process"
    r"|^\s*\d+\.\s*Primary Request and Intent\b"
    r"|^\s*<summary>",
    re.IGNORECASE | re.MULTILINE,
)
"""Openings and headings that harnesses put in a compaction summary (Claude Code's
"This session is being continued…" with its "Primary Request and Intent" section,
pi's "compacted into the following summary", Codex's summary prefix)."""

HOST_PATH = re.compile(
    r"(?<![\w.~$-])/(?:home|Users)/(?!<)[A-Za-z0-9._-]+"
    r"|(?<![\w])[A-Za-z]:[\\/]+(?:Users|Documents and Settings)[\\/]+[^\\/\s'\"`]+",
    re.IGNORECASE,
)
"""An absolute path into a person's home folder, POSIX or Windows."""

DRIVE_OR_BACKSLASH = re.compile(r"(^|/)[A-Za-z]:($|/)|\\")

TEST_FILE = re.compile(r"(^|/)(test_[^/]*\.py|[^/]*_test\.py|conftest\.py)$")
ALWAYS_SEEN = {
    "conftest.py",
    "pytest.ini",
    "tox.ini",
    "setup.cfg",
    "setup.py",
    "pyproject.toml",
    "__init__.py",
}
"""Files a test run reads whatever the tests import."""


@static_check
def instruction_is_a_request(tree: TaskTree) -> Iterator[Finding]:
    text = tree.text("instruction.md")
    if not text:
        return
    match = COMPACTION.search(text)
    if match:
        yield Finding(
            rule_id="semantic.compaction-summary",
            path="instruction.md",
            message=f"the instruction is a harness's compaction summary: {match.group(0)[:60]!r}",
        )
    if len(text) > MAX_INSTRUCTION_CHARS:
        yield Finding(
            rule_id="semantic.instruction-huge",
            path="instruction.md",
            message=f"the instruction has {len(text)} characters (limit "
            f"{MAX_INSTRUCTION_CHARS}): a transcript or dump, not a request",
        )


@static_check
def no_host_paths(tree: TaskTree) -> Iterator[Finding]:
    """Home paths in the instruction or task.toml are errors (they name a person and a
    machine the agent does not have); in other files, a warning (project code may hold a
    fixture path)."""
    texts = {"instruction.md": tree.text("instruction.md") or ""}
    if tree.config_text is not None:
        texts["task.toml"] = tree.config_text
    for rel, (content, _) in sorted(tree.files.items()):
        if rel != "instruction.md" and rel.startswith("environment/"):
            texts[rel] = content.decode("utf-8", errors="replace")
    for rel, text in texts.items():
        match = HOST_PATH.search(text)
        if match:
            yield Finding(
                rule_id="semantic.host-path",
                severity="error" if rel in {"instruction.md", "task.toml"} else "warning",
                path=rel,
                message=f"{rel} names a host home path: {match.group(0)[:60]!r}",
            )


@static_check
def file_names_are_posix(tree: TaskTree) -> Iterator[Finding]:
    for rel in sorted([*tree.files, *tree.symlinks]):
        if DRIVE_OR_BACKSLASH.search(rel):
            yield Finding(
                rule_id="semantic.windows-file-name",
                path=rel,
                message=f"{rel!r} has a drive letter or backslash: a host path taken as a name",
            )


@static_check
def qa_answer_not_from_errors(tree: TaskTree) -> Iterator[Finding]:
    answer = _qa_answer(tree)
    for rel, (content, _) in sorted(tree.files.items()):
        if not rel.startswith("environment/"):
            continue
        text = content.decode("utf-8", errors="replace")
        errors = error_lines(text)
        if errors and _only_errors(text, errors):
            yield Finding(
                rule_id="semantic.workspace-file-is-error",
                path=rel,
                message=f"{rel} holds only error output: {errors[0].strip()[:60]!r}",
            )
        if answer is None:
            continue
        hit = next((e for e in errors if answer in _tokens(e)), None)
        if hit is not None:
            yield Finding(
                rule_id="semantic.qa-answer-from-error",
                path=rel,
                message=f"the expected answer {answer!r} is in error text: {hit.strip()[:60]!r}",
            )


def _qa_answer(tree: TaskTree) -> str | None:
    """The expected answer of a qa task written as `tests/expected.json` {"answer": …}."""
    raw = tree.text("tests/expected.json")
    if raw is None:
        return None
    try:
        answer = json.loads(raw).get("answer")
    except (ValueError, AttributeError):
        return None
    return str(answer).strip() if answer is not None and str(answer).strip() else None


def _tokens(line: str) -> set[str]:
    return {t.strip(",;:()'\"`.") for t in line.split()}


def _only_errors(text: str, errors: list[str]) -> bool:
    """A short file that opens with an error line and has nothing but error lines and
    their indented continuations (a traceback's frames): a failed command's output."""
    lines = [line for line in text.splitlines() if line.strip()]
    shown = {e.strip() for e in errors}
    return (
        0 < len(lines) <= 20
        and lines[0].strip() in shown
        and all(line.strip() in shown or line[:1].isspace() for line in lines)
    )


@static_check
def reference_reaches_the_verifier(tree: TaskTree) -> Iterator[Finding]:
    written = reference_writes(tree.text("solution/solve.sh") or "")
    if not written:
        return  # a reference we cannot read statically: judged in the container instead
    roots = {
        rel: content.decode("utf-8", errors="replace")
        for rel, (content, _) in tree.files.items()
        if rel.startswith("tests/") or (rel.startswith("environment/") and TEST_FILE.search(rel))
    }
    code = {
        rel: content.decode("utf-8", errors="replace")
        for rel, (content, _) in tree.files.items()
        if rel.startswith("environment/") and rel.endswith(".py")
    }
    code.update({p: c for p, c in written.items() if c is not None and p.endswith(".py")})
    imported, seen = _reachable(roots, code)
    if any(_is_seen(path, imported, seen) for path in written):
        return
    yield Finding(
        rule_id="semantic.reference-unverified",
        path="solution/solve.sh",
        message="the reference changes only "
        + ", ".join(sorted(written)[:5])
        + ", which no test imports or names",
    )


def reference_writes(script: str) -> dict[str, str | None]:
    """Workspace paths a solve.sh writes or deletes (with the content of a `cat > P <<X`
    here-document), from `>`/`>>` redirections, `rm`, `tee`, `sed -i` and the `+++`
    headers of an applied diff. Empty when none is recognised (a foreign reference in
    another style)."""
    written: dict[str, str | None] = {}
    lines = script.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        heredoc = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", line)
        words = _words(line)
        targets = list(_command_writes(words))
        body: list[str] = []
        if heredoc:
            while index < len(lines) and lines[index].strip() != heredoc.group(1):
                body.append(lines[index])
                index += 1
            index += 1
            if words and words[0] in {"git", "patch"}:
                targets += [m for b in body if (m := _diff_target(b))]
        overwrite = heredoc is not None and words[:1] == ["cat"] and ">" in words
        for target in targets:
            path = _workspace_path(target)
            if path:
                written[path] = "\n".join(body) + "\n" if overwrite else None
    return written


def _words(line: str) -> list[str]:
    try:
        return shlex.split(re.sub(r"<<-?\s*['\"]?\w+['\"]?", "", line), comments=True)
    except ValueError:
        return line.split()


def _command_writes(line_words: list[str]) -> Iterator[str]:
    segment: list[str] = []
    for word in [*line_words, ";"]:
        if word in {";", "&&", "||", "|", "&"}:
            yield from _segment_writes(segment)
            segment = []
        else:
            segment.append(word)


def _segment_writes(words: list[str]) -> Iterator[str]:
    for position, word in enumerate(words):
        if word in {">", ">>"} and position + 1 < len(words):
            yield words[position + 1]
        elif word.startswith((">", ">>")) and word.lstrip(">"):
            yield word.lstrip(">")
    if not words:
        return
    args = [w for w in words[1:] if not w.startswith("-") and w not in {">", ">>"}]
    if words[0] in {"rm", "tee"} or (words[0] == "sed" and "-i" in words):
        yield from args[1:] if words[0] == "sed" else args


def _diff_target(line: str) -> str | None:
    match = re.match(r"\+\+\+ (?:b/)?(\S+)", line)
    return match.group(1) if match and match.group(1) != "/dev/null" else None


def _workspace_path(raw: str) -> str | None:
    if raw.startswith("/workspace/"):
        raw = raw[len("/workspace/") :]
    if raw.startswith(("/", "$", "&")) or not raw:
        return None
    return posixpath.normpath(raw)


def _module_names(rel: str) -> set[str]:
    """Dotted names a file can be imported as (every suffix: src layouts, subfolders)."""
    parts = rel.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return {".".join(parts[i:]) for i in range(len(parts))} - {""}


def _imports(source: str) -> set[str]:
    tree = parse_python(source)
    if tree is None:
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names = [base] + [f"{base}.{a.name}" if base else a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            found.update(".".join(parts[: i + 1]) for i in range(len(parts)) if parts[0])
    return found


def _reachable(roots: dict[str, str], code: dict[str, str]) -> tuple[set[str], str]:
    """(module names imported, text) of the tests and every workspace module they
    import, transitively."""
    texts = dict(roots)
    imported: set[str] = set()
    frontier = list(roots.values())
    while frontier:
        imported.update(*(_imports(t) for t in frontier))
        frontier = []
        for rel, text in code.items():
            if rel not in texts and _module_names(rel) & imported:
                texts[rel] = text
                frontier.append(text)
    return imported, "\n".join(texts.values())


def _is_seen(path: str, imported: set[str], seen: str) -> bool:
    """The verifier imports the module, or names the file (a script it runs, data it
    reads), or the file is configuration every test run reads."""
    name = posixpath.basename(path)
    if name in ALWAYS_SEEN or (path.endswith(".py") and _module_names(path) & imported):
        return True
    return bool(re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", seen))
