"""qa: the user asked a question about the files; the agent answered with a number that
a read-only command over known files printed. That command must have succeeded (exit 0,
no failure text) and the agent's final reply must give that number and no other number
the command printed. The reference re-runs the command in the container and writes the
token it printed, so the oracle check re-derives the expected value."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from repo2rlenv.bundle.standard import grading_files
from repo2rlenv.errortext import failure_lines
from repo2rlenv.kinds.common import (
    Reject,
    SessionContext,
    build_bundle,
    check_has_no_secrets,
    clean_instruction,
    known_files,
    step_range,
)
from repo2rlenv.replay.paths import PathResolver
from repo2rlenv.replay.replay import CommandRecord, Replay
from repo2rlenv.shell import command_effects
from repo2rlenv.shell.vocabulary import PURE_READERS
from schemas import BundleFile, TaskBundle

QUESTION = re.compile(
    r"\b(how many|how much|how long|how large|how big|count (?:the|of|how)|number of|"
    r"what(?:'s| is| was| are)? (?:the )?(?:total|sum|count|number|size|average|mean|"
    r"maximum|minimum|max|min|median|port|percentage|share))\b",
    re.IGNORECASE,
)
"""A request for a quantity: yes/no questions and open questions are not qa tasks."""
FILE_WORDS = re.compile(
    r"\b(files?|folders?|director(?:y|ies)|lines?|rows?|columns?|entries|records|"
    r"repo(?:sitory)?|project|codebase|code|functions?|classes|modules?|tests?|"
    r"csv|json|yaml|toml|logs?|config(?:uration)?|dataset|table)\b",
    re.IGNORECASE,
)
"""Words that make a quantity question one about the workspace's files."""
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w|\.\d)")
"""A number in prose; one that ends a sentence ("… has 4.") counts too."""
MAX_OUTPUT = 2000

CHECK_PY = """import json
import math
import re
import sys
from pathlib import Path

expected = json.loads(Path("/tests/expected.json").read_text())["answer"]
try:
    text = Path("/workspace/answer.txt").read_text()
except OSError as exc:
    sys.exit(f"no answer: {exc}")
found = re.findall(r"-?\\d+(?:\\.\\d+)?", text.replace(",", ""))
print("answer", found[:1], "expected", expected)
ok = len(found) >= 1 and math.isclose(float(found[0]), float(expected), rel_tol=1e-6, abs_tol=1e-9)
sys.exit(0 if ok else 1)
"""

SOLVE = """#!/bin/bash
set -euo pipefail
cd {workdir}
python3 - <<'RLENV_QA'
import subprocess
out = subprocess.run(["bash", "-c", {command}], capture_output=True, text=True, cwd={cwd}).stdout
tokens = out.split()
open("/workspace/answer.txt", "w").write(tokens[{position}].strip(",;:()") + "\\n")
RLENV_QA
"""


def _answers(replay: Replay, start: int, end: int) -> list[str]:
    """Numbers in the agent's last message of the span."""
    lo, hi = start, end
    steps = {e.step_id for e in replay.session.events[lo:hi]}
    texts = [
        s.message
        for s in replay.session.trajectory.steps
        if s.source == "agent"
        and isinstance(s.message, str)
        and s.message.strip()
        and (not steps or min(steps) <= s.step_id <= max(steps) + 1)
    ]
    return NUMBER.findall(texts[-1]) if texts else []


def _safe_files(command: CommandRecord, replay: Replay) -> list[str] | None:
    effects = command_effects(command.command)
    if effects.opaque or effects.effects or not effects.words:
        return None
    resolver = PathResolver(replay.session.cwd)
    resolver.cwd = command.cwd
    files = []
    for words in effects.words:
        if words[0].rsplit("/", 1)[-1] not in PURE_READERS:
            return None
        for word in words[1:]:
            if word.startswith("-"):
                continue
            rel = resolver.resolve(word)
            if rel is not None and rel in replay.workspace.files:
                files.append(rel)
    return files or None


def candidates(replay: Replay, ctx: SessionContext) -> Iterator[TaskBundle | Reject]:
    for position, turn in enumerate(replay.turns):
        if not QUESTION.search(turn.text):
            if "?" in turn.text:
                yield Reject("qa.not-a-quantity-question", turn.text.strip()[:80])
            continue
        try:
            yield _build(replay, ctx, position)
        except Reject as reject:
            yield reject


def _succeeded(command: CommandRecord, replay: Replay) -> bool:
    """Exit 0 and no failure text in the output. A format that records no exit status
    (None) counts only when the tool did not flag an error and the output shows none:
    "Exit code 1\ncat: …: No such file or directory" is not an answer source."""
    if command.exit_code not in (0, None) or failure_lines(command.output or ""):
        return False
    action = replay.session.events[command.index]
    return command.exit_code == 0 or getattr(action, "ok", False) is True


def _about_files(question: str, files: list[str]) -> bool:
    """The question names a file the command read (its name or stem) or talks about
    files, lines, rows… at all: a question about the workspace, not about the world."""
    lowered = question.lower()
    for path in files:
        name = path.rsplit("/", 1)[-1].lower()
        stem = name.split(".")[0] if not name.startswith(".") else name
        if name in lowered or (len(stem) >= 3 and re.search(rf"\b{re.escape(stem)}\b", lowered)):
            return True
    return bool(FILE_WORDS.search(question))


def _build(replay: Replay, ctx: SessionContext, position: int) -> TaskBundle:
    start_index, end_index = replay.turn_span(position)
    answers = _answers(replay, start_index, end_index)
    if not answers:
        raise Reject("qa.no-numeric-answer", "the agent's answer holds no number")
    reason = Reject(
        "qa.answer-not-derivable",
        "no read-only command over known files printed the agent's answer",
    )
    for command in reversed(replay.commands):
        if not start_index <= command.index < end_index:
            continue
        output = command.output or ""
        if not output or len(output) > MAX_OUTPUT:
            continue
        tokens = [t.strip(",;:()") for t in output.split()]
        hit = next((a for a in reversed(answers) if a in tokens), None)
        files = _safe_files(command, replay) if hit is not None else None
        if hit is None or files is None:
            continue
        if not _succeeded(command, replay):
            reason = Reject("qa.command-failed", f"the command that printed {hit} failed")
            continue
        shown = {a for a in answers if a in tokens}
        if len(shown) > 1:
            raise Reject(
                "qa.answer-ambiguous",
                f"the final reply gives {len(shown)} numbers the command printed",
            )
        if not _about_files(replay.turns[position].text, files):
            raise Reject("qa.not-about-files", replay.turns[position].text.strip()[:80])
        start = known_files(replay.workspace.snapshot(command.index), sorted(set(files)))
        check_has_no_secrets(start, ctx.published)
        question = clean_instruction(replay.turns[position].text, replay)
        instruction = (
            f"{question}\n\nAnswer from the files in the current folder "
            "(/workspace). Write only the answer, a number, to `answer.txt`.\n"
        )
        solve = SOLVE.format(
            workdir="/workspace",
            command=repr(command.command),
            cwd=repr("/workspace/" + command.cwd if command.cwd else "/workspace"),
            position=tokens.index(hit),
        )
        tests = [
            *grading_files(CHECK_PY),
            BundleFile(
                path="tests/expected.json", content=(json.dumps({"answer": hit}) + "\n").encode()
            ),
        ]
        return build_bundle(
            ctx,
            replay,
            kind="qa",
            index=position,
            instruction=instruction,
            start=start,
            tests=tests,
            solve_sh=solve,
            step_range=step_range(replay, start_index, end_index),
            needs_pytest=False,
        )
    raise reason
