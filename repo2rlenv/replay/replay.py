"""Replay a parsed session's actions over a virtual workspace.

The result keeps, in session order, every user turn and command (with its working
directory inside the root, output and exit code), the workspace timeline, and the paths
the session reached outside its root (recorded, never written).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from repo2rlenv.formats.base import (
    ApplyPatch,
    EditFile,
    OtherTool,
    ParsedSession,
    ReadFile,
    RunCommand,
    UnifiedDiff,
    UserTurn,
    WriteFile,
)
from repo2rlenv.formats.history import harness_cut
from repo2rlenv.replay.patches import (
    FilePatch,
    PatchError,
    action_patches,
    apply_hunks,
)
from repo2rlenv.replay.paths import PathResolver
from repo2rlenv.replay.test_scripts import script_words
from repo2rlenv.replay.workspace import ABSENT, PARTIAL, UNKNOWN, FileState, VirtualWorkspace
from repo2rlenv.runners import Detected, detect
from repo2rlenv.runners.summary import inferred_exit
from repo2rlenv.shell import command_effects, is_check

_CAT_ERROR = re.compile(
    r"\A(?:/\S*/)?cat: [^\n]*: (?:No such file or directory|Is a directory|Permission denied"
    r"|Not a directory|Input/output error)\s*\Z"
    r"|\A\s*(?:Get-Content|cat) ?: Cannot find path",
)


def _failed_read(output: str) -> bool:
    """cat's (or PowerShell's `cat` alias's) error message, not file content."""
    return _CAT_ERROR.search(output[:2000]) is not None


MAX_FILE_CHARS = 2_000_000


@dataclass
class CommandRecord:
    index: int
    step_id: int
    command: str
    cwd: str  # relative to the root; "" is the root
    output: str | None
    exit_code: int | None
    checks: list[list[str]]
    opaque: bool
    exit_inferred: bool = False
    """True when the format recorded no exit status and `exit_code` was read from the
    test runner's summary line (`runners.summary`)."""
    runner: str | None = None
    """The registered test runner (`repo2rlenv.runners.RUNNERS`) the command ran, any
    language; `checks` keeps the pytest words the Python kinds read."""
    runner_words: list[str] = field(default_factory=list)
    """That runner's own words, package manager and package.json script resolved."""


@dataclass
class TurnRecord:
    index: int
    step_id: int
    text: str


@dataclass
class Replay:
    session: ParsedSession
    workspace: VirtualWorkspace
    turns: list[TurnRecord] = field(default_factory=list)
    commands: list[CommandRecord] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    failed_edits: list[str] = field(default_factory=list)
    events: int = 0

    def turn_span(self, position: int) -> tuple[int, int]:
        """Event index range [start, end) answering the turn at `position`."""
        start = self.turns[position].index
        end = self.turns[position + 1].index if position + 1 < len(self.turns) else self.events
        return start, end


class Replayer:
    def __init__(self, session: ParsedSession, baseline: dict[str, str] | None = None) -> None:
        self.replay = Replay(session=session, workspace=VirtualWorkspace())
        self.paths = PathResolver(session.cwd)
        if baseline:
            self.replay.workspace.seed(baseline)

    @property
    def ws(self) -> VirtualWorkspace:
        return self.replay.workspace

    def resolve(self, raw: str, resolver: PathResolver | None = None) -> str | None:
        rel = (resolver or self.paths).resolve(raw)
        if rel is None and isinstance(raw, str):
            self.replay.outside.append(raw[:300])
        return rel

    def run(self) -> Replay:
        for index, event in enumerate(self.replay.session.events):
            self.replay.events = index + 1
            if isinstance(event, UserTurn):
                self.replay.turns.append(TurnRecord(index, event.step_id, event.text))
            elif isinstance(event, WriteFile):
                self.write(index, event)
            elif isinstance(event, EditFile):
                self.edit(index, event)
            elif isinstance(event, ApplyPatch | UnifiedDiff):
                self.patch(index, event)
            elif isinstance(event, ReadFile):
                self.read(index, event)
            elif isinstance(event, RunCommand):
                self.command(index, event)
            elif isinstance(event, OtherTool) and getattr(event, "modifies", None):
                path = self.resolve(event.modifies)
                if path is not None and event.ok:
                    self.ws.set(index, path, UNKNOWN, "tool")
        return self.replay

    def write(self, index: int, action: WriteFile) -> None:
        path = self.resolve(action.path)
        if path is None or not action.ok:
            return
        state = (
            FileState("known", action.content) if len(action.content) <= MAX_FILE_CHARS else UNKNOWN
        )
        self.ws.set(index, path, state, "write")

    def edit(self, index: int, action: EditFile) -> None:
        path = self.resolve(action.path)
        if path is None or not action.ok:
            return
        before = self.ws.latest(path)
        if before.status != "known" or before.content is None:
            self.ws.set(index, path, PARTIAL, "edit")
            return
        content = before.content
        for span in action.edits:
            if span.old == "":
                if content != "":
                    break
                content = span.new
                continue
            if span.old not in content:
                self.replay.failed_edits.append(path)
                self.ws.set(index, path, UNKNOWN, "edit")
                return
            count = -1 if span.replace_all else 1
            content = content.replace(span.old, span.new, count)
        else:
            self.ws.set(index, path, FileState("known", content), "edit")
            return
        self.ws.set(index, path, UNKNOWN, "edit")

    def patch(self, index: int, action: ApplyPatch | UnifiedDiff) -> None:
        if not action.ok:
            return
        try:
            patches = action_patches(action)
        except PatchError:
            return
        for file_patch in patches:
            self._apply_file_patch(index, file_patch)

    def _apply_file_patch(self, index: int, file_patch: FilePatch) -> None:
        path = self.resolve(file_patch.path)
        if path is None:
            return
        if file_patch.op == "delete":
            self.ws.set(index, path, ABSENT, "patch")
            return
        if file_patch.op == "add":
            self.ws.set(index, path, FileState("known", file_patch.added or ""), "write")
            return
        before = self.ws.latest(path)
        new_state = PARTIAL
        if before.status == "known" and before.content is not None:
            try:
                new_state = FileState("known", apply_hunks(before.content, file_patch.hunks))
            except PatchError:
                self.replay.failed_edits.append(path)
                new_state = UNKNOWN
        target = self.resolve(file_patch.move_to) if file_patch.move_to else path
        if target is None:
            return
        if target != path:
            self.ws.set(index, path, ABSENT, "patch")
        self.ws.set(index, target, new_state, "patch")

    def read(self, index: int, action: ReadFile) -> None:
        path = self.resolve(action.path)
        if path is None or not action.ok or action.content is None:
            return
        if action.complete and len(action.content) <= MAX_FILE_CHARS:
            content = action.content
            if content and not content.endswith("\n"):
                content += "\n"  # line-numbered views drop it; text files nearly always have it
            self.ws.observe(index, path, content)

    def command(self, index: int, action: RunCommand) -> None:
        local = self.paths.fork()
        if action.cwd is not None and not local.chdir(action.cwd):
            self.replay.outside.append(action.cwd[:300])
        start_cwd = local.cwd
        effects = command_effects(action.command)
        check_cwd = start_cwd
        for effect in effects.effects:
            if effect.op == "cd":
                local.chdir(effect.path or ".")
                check_cwd = local.cwd
                continue
            self._command_effect(index, effect, local, action.ok)
        if effects.opaque:
            self.ws.mark_opaque(index)
        self._cat_observation(index, action, effects.words, effects.effects, local)
        checks = [w for w in effects.words if is_check(w)]
        found = self._runner(effects.words, check_cwd, action.output) or self._runner(
            script_words(action.command, lambda path: self._known(path, local)),
            check_cwd,
            action.output,
        )
        exit_code, inferred = action.exit_code, False
        if exit_code is None and checks and action.ok:
            exit_code = inferred_exit(action.output)
            inferred = exit_code is not None
        elif exit_code is None and found is not None and action.ok:
            counts = found.runner.counts(action.output)
            exit_code = None if counts is None else counts.exit_status
            inferred = exit_code is not None
        self.replay.commands.append(
            CommandRecord(
                index=index,
                step_id=action.step_id,
                command=action.command,
                cwd=check_cwd if checks or found else start_cwd,
                output=action.output,
                exit_code=exit_code,
                checks=checks,
                opaque=effects.opaque,
                exit_inferred=inferred,
                runner=found.runner.name if found else None,
                runner_words=found.words if found else [],
            )
        )

    def _known(self, raw: str, local: PathResolver) -> str | None:
        """A file's text when replay knows it in full here (a script the command runs)."""
        path = local.resolve(raw)
        state = self.ws.latest(path) if path is not None else None
        return state.content if state is not None and state.status == "known" else None

    def _runner(self, words: list[list[str]], cwd: str, output: str | None) -> Detected | None:
        """The first test runner among the command's simple commands; `npm test` reads
        the nearest package.json replay knows at this point of the session."""

        def package_json() -> str | None:
            folder = cwd
            while True:
                state = self.ws.latest(
                    posixpath.join(folder, "package.json") if folder else "package.json"
                )
                if state.status == "known":
                    return state.content
                if not folder:
                    return None
                folder = posixpath.dirname(folder)

        for simple in words:
            found = detect(simple, package_json, output)
            if found is not None:
                return found
        return None

    def _cat_observation(
        self,
        index: int,
        action: RunCommand,
        words: list[list[str]],
        effects: list,
        local: PathResolver,
    ) -> None:
        """`cat FILE` alone, exit 0: its output is the file. Harnesses strip the final
        newline of command output; text files nearly always end with one, so it is put
        back. Formats that record no exit code still show cat's own error line, and a
        harness-cut output is only part of the file: neither is a read."""
        if (
            len(words) != 1
            or len(words[0]) != 2
            or words[0][0] != "cat"
            or effects
            or action.exit_code not in (0, None)
            or not action.ok
            or action.output is None
            or _failed_read(action.output)
            or harness_cut(action.output)
            or not action.output_complete
        ):
            return
        path = self.resolve(words[0][1], local)
        if path is None or len(action.output) > MAX_FILE_CHARS:
            return
        text = (
            action.output
            if action.output.endswith("\n") or not action.output
            else (action.output + "\n")
        )
        self.ws.observe(index, path, text)

    def _command_effect(self, index: int, effect, local: PathResolver, ok: bool) -> None:
        path = self.resolve(effect.path, local)
        if path is None:
            return
        if effect.op == "write" and ok:
            self.ws.set(index, path, FileState("known", effect.content), "write")
        elif effect.op == "append" and ok:
            before = self.ws.latest(path)
            state = (
                FileState("known", (before.content or "") + effect.content)
                if before.status in {"known", "absent"}
                else PARTIAL
            )
            self.ws.set(index, path, state, "command")
        elif effect.op == "delete":
            self.ws.delete_tree(index, path)
        elif effect.op in {"move", "copy"} and effect.source:
            source = self.resolve(effect.source, local)
            if source is None:
                self.ws.set(index, path, UNKNOWN, "command")
                return
            state = self.ws.latest(source)
            if local.resolve(effect.path.rstrip("/") + "/" + posixpath.basename(source)) and (
                effect.path.endswith("/")
            ):
                path = posixpath.join(path, posixpath.basename(source))
            self.ws.set(index, path, state if state.status == "known" else UNKNOWN, "command")
            if effect.op == "move":
                self.ws.set(index, source, ABSENT, "command")
        elif effect.op == "touch":
            if self.ws.latest(path).status in {"absent", "unknown"} and (path not in self.ws.files):
                self.ws.set(index, path, FileState("known", ""), "write")
        elif effect.op == "unknown":
            self.ws.set(index, path, UNKNOWN, "command")


def replay(session: ParsedSession, baseline: dict[str, str] | None = None) -> Replay:
    """Replay `session`; `baseline` (a repository checkout) is the known start state."""
    return Replayer(session, baseline).run()
