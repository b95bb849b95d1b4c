"""Semantic rules: is the task *about* something real? Judged from the files alone, on
any task folder (ours or foreign), before any container runs.

The structural rules in `static_rules` catch a task that is broken or leaks; these catch
a task that is well-formed but garbage: an instruction that is a harness's compaction
summary or names the author's home folder, a workspace file whose name is a Windows
path, a qa answer read off an error message, a reference that changes nothing the
verifier looks at. Each is listed in `validate.checks` beside the structural rules, and
documented in docs/gates.md.
"""

from __future__ import annotations

import ast
import json
import posixpath
import re
from collections.abc import Iterator

from repo2rlenv.bundle import TaskTree
from repo2rlenv.errortext import failure_lines
from repo2rlenv.kinds.common import is_test_file
from repo2rlenv.pysource import parse_python
from repo2rlenv.runners.base import JS_SOURCE, JS_TEST_FILE, js_imports
from repo2rlenv.validate.findings import Finding
from repo2rlenv.validate.reference_writes import reference_writes

MAX_INSTRUCTION_CHARS = 10_000
"""Longer than 99.4% of SWE-bench Verified problem statements (3 of 500 exceed it; the
median is 1.2 K characters, and those statements often paste whole tracebacks), and
than any request a session's user typed or a repair task's 15-line failure excerpt; the
compaction summary that slipped through was 14.5 K characters."""

COMPACTION = re.compile(
    r"being continued from a previous conversation"
    r"|ran out of context"
    r"|conversation (?:history )?(?:before this point )?(?:was|has been) "
    r"(?:compacted|summari[sz]ed)"
    r"|summary of (?:the|our) (?:previous|earlier|prior) conversation"
    r"|produced a summary of its thinking process"
    r"|^[#*\s]*\d+\.[*\s]*Primary Request and Intent\b",
    re.IGNORECASE | re.MULTILINE,
)
"""Openings and headings that harnesses put in a compaction summary (Claude Code's
"This session is being continued…" with its "Primary Request and Intent" section,
pi's "compacted into the following summary", Codex's summary prefix)."""

ERROR_FILE_LINES = 20
"""The most non-blank lines a workspace file holding only a failed command's output has."""
HOST_PATH = re.compile(
    r"(?<![\w.~$-])/(?:home|Users)/(?!<|(?:runner|runneradmin|user|username|ubuntu|travis|"
    r"circleci|jenkins|vagrant|vscode|codespace|Shared)(?![\w.-]))[A-Za-z0-9._-]+"
    r"|(?<![\w])[A-Za-z]:[\\/]+(?:Users|Documents and Settings)[\\/]+[^\\/\s'\"`]+",
    re.IGNORECASE,
)
"""An absolute path into a person's home folder, POSIX or Windows; the accounts of CI
machines and placeholders (`/home/runner`, `/home/user`, `/Users/Shared`) name nobody."""

TRACEBACK_FRAME = re.compile(r'^\s*File "|^\s*at |^\s*\S+\.py:\d+')
DRIVE_OR_BACKSLASH = re.compile(r"(^|/)[A-Za-z]:($|/)|\\")

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


def no_host_paths(tree: TaskTree) -> Iterator[Finding]:
    """A home path in the instruction's prose or in task.toml is an error: it names a
    person and sends the agent to a machine it does not have. Quoted output (a fenced
    block, an indented or traceback line, as SWE-bench-style issues paste) and project
    files get a warning: still personal data to redact, but the task itself is sound."""
    texts = {"instruction.md": tree.text("instruction.md") or ""}
    if tree.config_text is not None:
        texts["task.toml"] = tree.config_text
    for rel, (content, _) in sorted(tree.files.items()):
        if rel != "instruction.md" and rel.startswith("environment/"):
            texts[rel] = content.decode("utf-8", errors="replace")
    for rel, text in texts.items():
        hits = list(_host_paths(text, prose=rel == "instruction.md"))
        if not hits:
            continue
        quoted = all(in_quote for _, in_quote in hits) or rel not in {"instruction.md", "task.toml"}
        shown = next((p for p, q in hits if not q), hits[0][0])
        yield Finding(
            rule_id="semantic.host-path",
            severity="warning" if quoted else "error",
            path=rel,
            message=f"{rel} names a host home path: {shown[:60]!r}"
            + (" (in quoted output)" if quoted and rel == "instruction.md" else ""),
        )


def _may_hold_home(text: str) -> bool:
    """Whether `text` can hold a `HOST_PATH` match: every match has one of these clues
    in any case; ASCII text is checked lowered (the regex also folds some non-ASCII
    letters onto ASCII ones, so other text is always scanned)."""
    if not text.isascii():
        return True
    lowered = text.lower()
    return any(clue in lowered for clue in ("/home/", "users", "documents and settings"))


def _host_paths(text: str, prose: bool) -> Iterator[tuple[str, bool]]:
    """(path, whether it sits in quoted output) for each home path in `text`."""
    if not _may_hold_home(text) or HOST_PATH.search(text) is None:
        return  # most files of a checkout have none
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        quoted = prose and (
            fenced or line.startswith(("    ", "\t", ">")) or bool(TRACEBACK_FRAME.match(line))
        )
        for match in HOST_PATH.finditer(line):
            yield match.group(0), quoted


def file_names_are_posix(tree: TaskTree) -> Iterator[Finding]:
    for rel in sorted([*tree.files, *tree.symlinks]):
        if DRIVE_OR_BACKSLASH.search(rel):
            yield Finding(
                rule_id="semantic.windows-file-name",
                path=rel,
                message=f"{rel!r} has a drive letter or backslash: a host path taken as a name",
            )


def qa_answer_not_from_errors(tree: TaskTree) -> Iterator[Finding]:
    answer = _qa_answer(tree)
    for rel, (content, _) in sorted(tree.files.items()):
        if not rel.startswith("environment/"):
            continue
        text = content.decode("utf-8", errors="replace")
        if answer is None and not _short(text):
            continue  # only a short file can be error output alone (`_only_errors`)
        # A failed command's complaint, not data that mentions errors (a log a qa task
        # counts the ERROR lines of, a fixture holding an expected error message).
        failures = failure_lines(text)
        if failures and _only_errors(text, failures):
            yield Finding(
                rule_id="semantic.workspace-file-is-error",
                path=rel,
                message=f"{rel} holds only error output: {failures[0].strip()[:60]!r}",
            )
        if answer is None:
            continue
        hit = next((e for e in failures if answer in _tokens(e)), None)
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


def _short(text: str, most: int = ERROR_FILE_LINES) -> bool:
    """`text` has at most `most` non-blank lines (counted only until there are more)."""
    seen = 0
    for line in text.splitlines():
        if line.strip():
            seen += 1
            if seen > most:
                return False
    return True


def _only_errors(text: str, errors: list[str]) -> bool:
    """A short file that opens with an error line and has nothing but error lines and
    their indented continuations (a traceback's frames): a failed command's output."""
    lines = [line for line in text.splitlines() if line.strip()]
    shown = {e.strip() for e in errors}
    return (
        0 < len(lines) <= ERROR_FILE_LINES
        and lines[0].strip() in shown
        and all(line.strip() in shown or line[:1].isspace() for line in lines)
    )


def reference_reaches_the_verifier(tree: TaskTree) -> Iterator[Finding]:
    written = reference_writes(tree.text("solution/solve.sh") or "", _workdir(tree))
    if not written:
        return  # a reference we cannot read statically: judged in the container instead
    roots = {
        rel: content.decode("utf-8", errors="replace")
        for rel, (content, _) in tree.files.items()
        if rel.startswith("tests/")
        or (rel.startswith("environment/") and (is_test_file(rel) or JS_TEST_FILE.search(rel)))
    }
    code = {
        rel: content.decode("utf-8", errors="replace")
        for rel, (content, _) in tree.files.items()
        if rel.startswith("environment/") and rel.endswith(".py")
    }
    code.update({p: c for p, c in written.items() if c is not None and p.endswith(".py")})
    if _python_reached(roots, code, list(written)):
        return
    if _js_reached(roots, written) or _native_reached(roots, written):
        return
    yield Finding(
        rule_id="semantic.reference-unverified",
        path="solution/solve.sh",
        message="the reference changes only "
        + ", ".join(sorted(written)[:5])
        + ", which no test imports or names",
    )


def _js_reached(roots: dict[str, str], written: dict[str, str | None]) -> bool:
    """A JavaScript/TypeScript test (hidden, protected or in the start state) imports a
    file the reference writes (`./slug.js`, `../sum`)."""
    imported: set[str] = set()
    for rel, text in roots.items():
        parts = rel.split("/", 2)
        path = (
            parts[2] if parts[0] == "tests" and len(parts) == 3 else rel.partition("/workspace/")[2]
        )
        if JS_SOURCE.search(path):
            imported |= js_imports(path, text)
    return any(JS_SOURCE.sub("", p).removesuffix("/index") in imported for p in written)


def _native_reached(roots: dict[str, str], written: dict[str, str | None]) -> bool:
    """A hidden Go test shares its folder (its package) with a `.go` file the reference
    writes, or a hidden Rust integration test (`tests/*.rs`) sits beside the `src/` of
    a crate whose `.rs` files the reference writes: neither language names files in
    its imports, so a package's or crate's folder is what a test reaches."""
    hidden = [rel.split("/", 2)[2] for rel in roots if rel.startswith("tests/hidden/")]
    go_dirs = {posixpath.dirname(p) for p in hidden if p.endswith("_test.go")}
    crates = {p.rpartition("tests/")[0] for p in hidden if p.endswith(".rs") and "tests/" in p}
    for path in written:
        if path.endswith(".go") and posixpath.dirname(path) in go_dirs:
            return True
        if path.endswith(".rs") and any(path.startswith(c + "src/") for c in crates):
            return True
    return False


def _workdir(tree: TaskTree) -> str:
    """The agent's working folder: the Dockerfile's last WORKDIR, else /workspace."""
    found = re.findall(r"^\s*WORKDIR\s+(\S+)", tree.text("environment/Dockerfile") or "", re.M)
    return found[-1] if found and found[-1].startswith("/") else "/workspace"


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


def _python_reached(roots: dict[str, str], code: dict[str, str], written: list[str]) -> bool:
    """Whether the tests, or a workspace module they import (transitively), import or
    name a file the reference writes (`_is_seen`). The import graph is followed one wave
    at a time and the search stops at the first wave that reaches one: a SWE instance's
    test imports the package its fix is in, so its first wave decides, where walking a
    whole repository's graph (SymPy's 1,400 modules and 600 test files) took most of a
    run's mining. The result is the same as walking everything: the reached set only
    grows."""
    texts = dict(roots)
    imported: set[str] = set()
    # the verifier's own tests first, the start state's test files only if they miss
    hidden = [t for rel, t in roots.items() if rel.startswith("tests/")]
    later = [t for rel, t in roots.items() if not rel.startswith("tests/")]
    frontier = hidden or later
    while frontier:
        imported.update(*(_imports(t) for t in frontier))
        if any(_is_seen(path, imported, frontier) for path in written):
            return True
        frontier = []
        for rel, text in code.items():
            if rel not in texts and _module_names(rel) & imported:
                texts[rel] = text
                frontier.append(text)
        if not frontier and hidden and later:
            frontier, later = later, []
    return False


def _is_seen(path: str, imported: set[str], texts: list[str]) -> bool:
    """The verifier imports the module or a package holding it (packages load their
    modules by name at run time: plugins, backends, Django apps), or one of `texts`
    names the file (a script it runs, data it reads), or the file is configuration
    every test run reads."""
    name = posixpath.basename(path)
    if name in ALWAYS_SEEN:
        return True
    if path.endswith(".py"):
        names = _module_names(path)
        packages = {n.rsplit(".", k)[0] for n in names for k in range(n.count(".") + 1)}
        if packages & imported:
            return True
    named = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-])")
    return any(name in text and named.search(text) for text in texts)
