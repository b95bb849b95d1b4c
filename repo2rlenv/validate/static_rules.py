"""Static checks: everything that can be judged from the files alone, each a small function.

A check takes the task tree and yields findings. Checks are a registry so a new rule is
one function; `run_static` runs all of them and never raises on a bad task.
"""

from __future__ import annotations

import difflib
import json
import posixpath
import re
import shlex
from collections.abc import Callable, Container, Iterable, Iterator

from repo2rlenv.bundle import TaskTree
from repo2rlenv.checkout_secrets import HIDDEN, PROTECTED, WORKSPACE, blob_id
from repo2rlenv.publish.portable import local_only_bases
from repo2rlenv.secrets import find_secrets
from repo2rlenv.validate.findings import Finding

HIDDEN_PATHS = re.compile(
    r"(?<![\w.-])(/tests\b|/solution\b|/logs/verifier\b|reward\.(?:txt|json)\b)"
)
DOWNLOADERS = {"curl", "wget", "git", "apt-get", "apt", "apk", "npm", "npx", "uvx", "yarn"}
MIN_SOLUTION_LINE = 24
MIN_SOLUTION_STRETCH = 45
"""The shortest stretch of a reference line that counts when the instruction quotes it
inside a longer line (django-16139's issue: "replacing ... with password.help_text =
password.help_text.format(f"../../{self.instance.pk}/password/")"). Measured over 208
proven SWE tasks: stretches of 30 characters shared with an added line the start lacks
matched 12 tasks, half of them idioms and prose (`except (TypeError, ValueError):`);
at 45, 5 matched, each the fix's own code written into the issue."""
MIN_LEAK_BYTES = 16


def config_parses(tree: TaskTree) -> Iterator[Finding]:
    if tree.config_error_kind is not None:
        rule = {"missing": "task.config-missing", "toml": "task.config-invalid-toml"}.get(
            tree.config_error_kind, "task.config-schema"
        )
        yield Finding(rule_id=rule, message=tree.config_error or "", path="task.toml")


def required_files(tree: TaskTree) -> Iterator[Finding]:
    required = ["instruction.md", "tests/test.sh", "solution/solve.sh"]
    if tree.config is None or not tree.config.environment.docker_image:
        required.append("environment/Dockerfile")
    for rel in required:
        if rel not in tree.files:
            yield Finding(rule_id="task.file-missing", message=f"{rel} is missing", path=rel)
    for rel in ("tests/test.sh", "solution/solve.sh"):
        if rel in tree.files and not tree.files[rel][1]:
            yield Finding(
                rule_id="task.not-executable",
                severity="warning",
                message=f"{rel} is not executable (Harbor chmods it; others may not)",
                path=rel,
            )


def links_and_special_files(tree: TaskTree) -> Iterator[Finding]:
    for rel, target in sorted(tree.symlinks.items()):
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
        if target.startswith("/") or resolved == ".." or resolved.startswith("../"):
            yield Finding(
                rule_id="bundle.symlink-escape",
                path=rel,
                message=f"{rel} -> {target} leaves the task folder",
            )
        else:
            yield Finding(
                rule_id="bundle.symlink",
                severity="warning",
                path=rel,
                message=f"{rel} -> {target}: copy the file instead of linking it",
            )
    for rel in tree.special:
        yield Finding(
            rule_id="bundle.special-file", path=rel, message=f"{rel} is not a regular file"
        )


def recorded_hash(tree: TaskTree) -> Iterator[Finding]:
    block = tree.config.metadata.repo2rlenv if tree.config else None
    if block and block.content_hash and block.content_hash != tree.content_hash:
        yield Finding(
            rule_id="bundle.hash-mismatch",
            severity="warning",
            path="task.toml",
            message="files changed since the task was written; its label may be stale",
        )


def instruction_text(tree: TaskTree) -> Iterator[Finding]:
    text = tree.text("instruction.md")
    if text is None:
        return
    if not text.strip():
        yield Finding(
            rule_id="instruction.empty", message="instruction.md has no text", path="instruction.md"
        )
        return
    for match in sorted({m.group(1) for m in HIDDEN_PATHS.finditer(text)}):
        yield Finding(
            rule_id="instruction.names-hidden-path",
            path="instruction.md",
            message=f"the instruction mentions {match}, which the agent must not know",
        )
    given = _given_away(_squash(text), list(_solution_lines(tree)), tree)
    if given is not None:
        yield Finding(
            rule_id="instruction.contains-solution",
            path="instruction.md",
            message=f"the instruction quotes reference code: {given[:60]!r}",
        )


def _given_away(normalised: str, lines: list[str], tree: TaskTree) -> str | None:
    """The first reference code the squashed instruction quotes and the start state does
    not hold: a whole reference line (held when a start file has it as a line of its
    own), else a stretch of one (held when a start file's squashed text has it)."""
    quoted = [line for line in lines if line in normalised]
    held = _held_in_start(quoted, tree, _line_set) if quoted else set()
    given = [line for line in quoted if line not in held]
    if not given:
        stretches = _quoted_stretches(normalised, lines)
        held = _held_in_start(stretches, tree, _squash) if stretches else set()
        given = [s for s in stretches if s not in held and not _names_a_start_file(s, tree)]
    return given[0] if given else None


def _names_a_start_file(stretch: str, tree: TaskTree) -> bool:
    """A stretch that is (a quoted part of) a start file's own path: a data-analysis
    question names its data file (`datasets/Final Project Results - Experiment.xls`) as
    the reference reads it, and the agent sees that name in its workspace anyway."""
    name = stretch.strip("'\"` ")
    if not name:
        return False
    return any(
        rel.startswith("environment/") and rel.endswith(name) and rel[: -len(name)].endswith("/")
        for rel in tree.files
    )


def _quoted_stretches(text: str, lines: list[str]) -> list[str]:
    """The longest stretch (at least `MIN_SOLUTION_STRETCH` characters) of each reference
    line that the squashed instruction also holds, in the lines' order. A set of the
    instruction's windows finds the lines that share one at all, so the longest match
    is computed only for those (a reference that rewrites whole files has thousands)."""
    size = MIN_SOLUTION_STRETCH
    windows = {text[i : i + size] for i in range(len(text) - size + 1)}
    found: list[str] = []
    for line in lines:
        if not any(line[i : i + size] in windows for i in range(len(line) - size + 1)):
            continue
        matcher = difflib.SequenceMatcher(None, text, line, autojunk=False)
        match = matcher.find_longest_match(0, len(text), 0, len(line))
        stretch = line[match.b : match.b + match.size]
        if stretch not in found:
            found.append(stretch)
    return found


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _solution_lines(tree: TaskTree) -> Iterator[str]:
    """Substantial lines of the reference: what an instruction must never quote."""
    for rel, (content, _) in sorted(tree.files.items()):
        if not rel.startswith("solution/"):
            continue
        for raw in content.decode("utf-8", errors="replace").splitlines():
            line = _squash(raw)
            if len(line) >= MIN_SOLUTION_LINE and not line.startswith(("#", "cat ", "cat>", "EOF")):
                yield line


def _line_set(text: str) -> set[str]:
    """A start file's squashed lines: a reference line the instruction quotes is no
    giveaway when the start holds it as a line of its own. A repair instruction quotes
    the failing run's traceback, which quotes lines of the unchanged start code; those
    are also in solve.sh (it rewrites whole files) but give nothing away."""
    return {_squash(raw) for raw in text.splitlines()}


def _held_in_start(
    items: Iterable[str], tree: TaskTree, view: Callable[[str], Container[str]]
) -> set[str]:
    """Which squashed `items` are `in` the `view` of some start file (its set of squashed
    lines, or its whole squashed text). A file is viewed only when it holds an item's
    longest word (squashing keeps every word as it is): a repository's start state is a
    million lines, most files none."""
    keys = {item: max(item.split(" "), key=len) for item in items}
    found: set[str] = set()
    for rel, (content, _) in tree.files.items():
        if not rel.startswith("environment/"):
            continue
        text = content.decode("utf-8", errors="replace")
        wanted = [item for item in keys if item not in found and keys[item] in text]
        if wanted:
            seen = view(text)
            found.update(item for item in wanted if item in seen)
    return found


def secrets(tree: TaskTree) -> Iterator[Finding]:
    """Every file is scanned. A start-state file the task lists as a blob of its anchored
    public commit (`public_checkout_secrets`), or the verifier's protected copy of it, is
    a warning while its bytes still hash to that blob (the repository publishes it);
    edited, it is an error like any other. So is an instance task's hidden test file
    the benchmark publishes (`swe.published_test_secrets`)."""
    texts = dict(tree.files)
    if tree.config_text is not None:
        texts["task.toml"] = (tree.config_text.encode(), False)
    block = tree.config.metadata.repo2rlenv if tree.config else None
    public = {
        folder + entry.path: entry.blob
        for entry in (block.public_checkout_secrets if block else [])
        for folder in (WORKSPACE, PROTECTED)
    }
    swe = block.swe if block else None
    public.update({HIDDEN + e.path: e.blob for e in (swe.published_test_secrets if swe else [])})
    for rel, (content, _) in sorted(texts.items()):
        kinds = sorted({hit.kind for hit in find_secrets(content.decode("utf-8", "replace"))})
        if kinds and rel in public and blob_id(content) == public[rel]:
            yield Finding(
                rule_id="secrets.public-checkout",
                severity="warning",
                path=rel,
                message=f"{rel} contains {', '.join(kinds)}, as the anchored public commit "
                f"publishes it (blob {public[rel][:12]})",
            )
        elif kinds:
            yield Finding(
                rule_id="secrets.detected",
                path=rel,
                message=f"{rel} contains {', '.join(kinds)}; redact it",
            )


def hidden_files_stay_hidden(tree: TaskTree) -> Iterator[Finding]:
    dockerfile = tree.text("environment/Dockerfile") or ""
    for number, line in enumerate(dockerfile.splitlines(), start=1):
        words = line.strip().split()
        if len(words) >= 3 and words[0].upper() in {"COPY", "ADD"}:
            sources = [w for w in words[1:-1] if not w.startswith("--")]
            if any(re.search(r"(^|/)(tests?|solution)(/|$)|(test|solve)\.sh$", s) for s in sources):
                yield Finding(
                    rule_id="leak.copies-hidden-files",
                    path="environment/Dockerfile",
                    message=f"line {number} copies hidden files: {line.strip()[:80]}",
                )
    # tests/protected/ holds the verifier's pristine copies of tests the agent may see.
    hidden = {
        content: rel
        for rel, (content, _) in tree.files.items()
        if rel.startswith(("tests/", "solution/"))
        and not rel.startswith("tests/protected/")
        and len(content.strip()) >= MIN_LEAK_BYTES
    }
    for rel, (content, _) in sorted(tree.files.items()):
        if rel.startswith("environment/") and content in hidden:
            yield Finding(
                rule_id="leak.hidden-file-in-environment",
                path=rel,
                message=f"{rel} is identical to {hidden[content]}",
            )


def base_image_is_portable(tree: TaskTree) -> Iterator[Finding]:
    """A warning, not an error: the label says what was checked on this machine, where
    the base exists; portability matters when the task is published."""
    dockerfile = tree.text("environment/Dockerfile") or ""
    for number, image in local_only_bases(dockerfile):
        yield Finding(
            rule_id="env.local-only-base",
            severity="warning",
            path="environment/Dockerfile",
            message=f"line {number} starts FROM {image}, built on this machine only",
        )


def environment_bound_tests(tree: TaskTree) -> Iterator[Finding]:
    """A warning on every run: the task's verifier leaves out PASS_TO_PASS names the
    oracle settled as environment-bound (`mining.environment_bound`), so it checks less
    than the benchmark's row; counted, never silent."""
    entry = tree.files.get("tests/grading.json")
    try:
        bound = json.loads(entry[0]).get("environment_bound") if entry else None
    except (ValueError, AttributeError):
        return
    if isinstance(bound, list) and bound:
        shown = ", ".join(str(name) for name in bound[:3])
        yield Finding(
            rule_id="swe.environment-bound-tests",
            severity="warning",
            path="tests/grading.json",
            message=f"{len(bound)} PASS_TO_PASS name(s) do not decide: {shown}"[:2000],
        )


def verifier_stays_offline(tree: TaskTree) -> Iterator[Finding]:
    for rel, (content, _) in sorted(tree.files.items()):
        if not rel.startswith("tests/") or not rel.endswith(".sh"):
            continue
        for number, command in _shell_commands(content.decode("utf-8", "replace")):
            if _downloads(command):
                yield Finding(
                    rule_id="verifier.network-download",
                    path=rel,
                    message=f"line {number} reaches the network: {' '.join(command)[:80]}",
                )


def _shell_commands(script: str) -> Iterator[tuple[int, list[str]]]:
    for number, line in enumerate(script.splitlines(), start=1):
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            words = line.split()
        command: list[str] = []
        for word in [*words, ";"]:
            if word in {";", "&&", "||", "|", "&"}:
                if command:
                    yield number, command
                command = []
            else:
                command.append(word)


def _downloads(command: list[str]) -> bool:
    while command and command[0] in {"sudo", "env", "exec", "time", "timeout"}:
        command = command[1:]
    if not command:
        return False
    name = posixpath.basename(command[0])
    args = command[1:]
    if name in {"pip", "pip3", "uv"} or (name.startswith("python") and args[:2] == ["-m", "pip"]):
        return "install" in args and not {"--no-index", "--offline"} & set(args)
    if name == "git":
        return bool(args) and args[0] in {"clone", "fetch", "pull"}
    if name in {"npm", "yarn", "apt-get", "apt", "apk"}:
        return bool({"install", "add", "update", "ci"} & set(args))
    return name in DOWNLOADERS - {"git", "npm", "yarn", "apt-get", "apt", "apk"}
