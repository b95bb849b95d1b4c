"""Shell command text -> CallFacts.

The structure, the command vocabulary and which files a command writes or deletes come
from the task core's shell analyser (`repo2rlenv.shell`, on atif-scan's static shell
reader), the same one replay uses. On top of it this module tracks `cd` and simple
variables, reads through the obfuscation layers (`repo2rlenv.shell.deobfuscate`), and
routes code given to interpreters (`python -c`, `python - <<EOF`, `... | python3`) to
`code.analyze_code`. Text the reader cannot structure is scanned with the text fallbacks
instead of trusted.
"""

from __future__ import annotations

import re

from repo2rlenv.shell import deobfuscate as deob
from repo2rlenv.shell.effects import argument_effects, redirect_writes
from repo2rlenv.shell.parse import (
    SHELLS,
    Command,
    here_string,
    heredoc_bodies,
    parse,
    runs_script,
    static_output,
)
from repo2rlenv.shell.vocabulary import (
    ASSIGNMENT,
    CODE_FLAGS,
    DELETERS,
    ENV_DUMPS,
    FILE_READERS,
    LISTERS,
    MAX_DEPTH,
    NO_ACCESS,
    RUNNER_ALIASES,
    interpreter,
    is_secret_name,
)
from repo2rlenv.shell.wrappers import find_exec_commands, xargs_commands
from train.guard.code import analyze_code
from train.guard.facts import CallFacts, Write
from train.guard.network import (
    DEV_TCP,
    DOWNLOADERS,
    REMOTE_SHELLS,
    SOCKETS,
    command_hosts,
    hosts_in_text,
    url_hosts,
)
from train.guard.paths import HOME, looks_like_path, paths_in_text, resolve


class _Analysis:
    def __init__(self, cwd: str, depth: int, variables: dict[str, str]) -> None:
        self.cwd = cwd
        self.depth = depth
        self.vars = dict(variables)
        self.facts = CallFacts()

    # -- words ---------------------------------------------------------------------
    def expand(self, word: str) -> str:
        word = deob.substitute_vars(word, self.vars)
        subs = deob.substitutions(word)
        for start, end, body in reversed(subs):
            output = static_output(body, self.vars)
            if output is not None:
                word = word[:start] + output.rstrip("\n") + word[end:]
        return word

    def path(self, word: str) -> str:
        return resolve(word, self.cwd)

    # -- commands ------------------------------------------------------------------
    def run(self, text: str) -> None:
        facts = self.facts
        facts.commands.append(text)
        if self.depth > MAX_DEPTH:
            facts.incomplete = True
            return
        script = parse(text)
        if not script.complete:
            self.fallback(text)
            return
        bodies = heredoc_bodies(script, text)
        stream: dict[int, str | None] = {}
        for command in script.commands:
            heredoc = bodies.get(id(command))
            self.command(command, heredoc.text if heredoc else None, stream)

    def command(self, command: Command, body: str | None, stream: dict[int, str | None]) -> None:
        facts = self.facts
        raw = [w for w, _ in command.argv()]
        for word in command.words:
            for name in deob.variable_names(word):
                if is_secret_name(name) and name not in self.vars:
                    facts.env_reads.append(name)
        tcp = [h for _, target, _ in command.redirects for h in DEV_TCP.findall(target)]
        if tcp:
            facts.hosts.extend(tcp)
            facts.network = True
        if not raw:
            self.assignments(command.words)
            return
        words = [self.expand(w) for w in raw]
        words += [d for original in raw if (d := deob.escaped_variant(original))]
        if words[0] != raw[0] and deob.substitutions(raw[0]):
            self.nested(" ".join(words))
            return
        name = words[0].rsplit("/", 1)[-1]
        args = words[1:]
        piped_in = stream.get(command.pipeline)
        stdin = body if body is not None else here_string(command, self.expand)
        if stdin is None:
            stdin = piped_in
        literal = words[1 : len(raw)]  # without the decoded variants appended above
        stream[command.pipeline] = self.output(name, literal, stdin)
        facts.texts.append(" ".join(words))
        self.special(name, args, words, stdin, command)
        self.files(command, name, args, words, body, stdin)
        self.network(name, words)

    def assignments(self, words: list[str]) -> None:
        for word in words:
            match = ASSIGNMENT.match(word)
            if match:
                self.vars[match.group(1)] = self.expand(match.group(2))
        if words and words[0].rsplit("/", 1)[-1] in ENV_DUMPS:
            self.facts.env_reads.append("*")

    def output(self, name: str, args: list[str], stdin: str | None) -> str | None:
        produced = deob.produce(name, args)
        if produced is not None:
            return deob.clip(produced)
        if stdin is not None and deob.is_decoder(name, args):
            return deob.apply_filter(name, args, stdin)
        if name == "cat" and not args and stdin is not None:
            return stdin
        return None

    def special(
        self, name: str, args: list[str], words: list[str], stdin: str | None, command: Command
    ) -> None:
        facts = self.facts
        if name in ("cd", "pushd"):
            self.cwd = self.path(args[0]) if args and args[0] != "-" else HOME
            facts.reads.append(self.cwd)
        elif name == "eval":
            self.nested(" ".join(args))
        elif name in ("export", "declare", "typeset", "readonly", "local"):
            listing = not [a for a in args if not a.startswith("-")] or {"-p", "-x"} & set(args)
            if listing and not any(ASSIGNMENT.match(a) for a in args):
                facts.env_reads.append("*")
            self.assignments(args)
        elif name in ENV_DUMPS and not [a for a in args if not a.startswith("-")]:
            facts.env_reads.append("*")
        elif name == "printenv":
            facts.env_reads.extend(a for a in args if not a.startswith("-"))
        elif (name == "set" and not args) or (name == "compgen" and {"-v", "-e"} & set(args)):
            facts.env_reads.append("*")
        elif name == "alias":
            facts.runner_patches.extend(f"alias {a}" for a in args if RUNNER_ALIASES.match(a))
        elif name == "find":
            for line in find_exec_commands(args):
                self.nested(line)
        elif name == "xargs":
            for line in xargs_commands(args, stdin):
                self.nested(line)
        kind = interpreter(name)
        if name in SHELLS and not runs_script(command):
            operands = [a for a in args if not a.startswith("-")]
            if operands:
                facts.runs.append(self.path(operands[0]))
            elif stdin is not None:
                self.nested(stdin)
        elif kind is not None:
            self.interpreted(kind, args, stdin)
        elif looks_like_path(words[0]) and "/" in words[0]:
            facts.runs.append(self.path(words[0]))

    def interpreted(self, kind: str, args: list[str], stdin: str | None) -> None:
        facts = self.facts
        flags = CODE_FLAGS[kind]
        for i, arg in enumerate(args):
            is_flag = arg in flags or (kind == "python" and re.fullmatch(r"-[A-Za-z]*c", arg))
            if is_flag and i + 1 < len(args):
                facts.merge(analyze_code(args[i + 1], self.cwd, self.depth + 1, _shell_hook))
                return
            if arg == "-m" and i + 1 < len(args):
                module = args[i + 1]
                rest = args[i + 2 :]
                if module == "pip":
                    self.network("pip", ["pip", *rest])
                facts.texts.append(" ".join([module, *rest]))
                return
            if not arg.startswith("-"):
                facts.runs.append(self.path(arg))
                return
        if stdin is not None:
            facts.merge(analyze_code(stdin, self.cwd, self.depth + 1, _shell_hook))

    def files(
        self,
        command: Command,
        name: str,
        args: list[str],
        words: list[str],
        body: str | None,
        stdin: str | None,
    ) -> None:
        facts = self.facts
        written: set[str] = set()
        content = body if body is not None else stdin
        if content is None and name in ("echo", "printf"):
            content = deob.produce(name, words[1 : len(command.argv())])
        effects, _ = argument_effects(name, args)
        targets = [self.expand(target) for target, _ in redirect_writes(command)]
        for target in targets:
            written.add(target)
            facts.writes.append(Write(self.path(target), content))
        for op, target, _ in command.redirects:
            if op in ("<", "<>", "<&") and not target.isdigit():
                facts.reads.append(self.path(self.expand(target)))
        for effect in effects:
            if effect.path in written or effect.op == "cd":
                continue
            if effect.op in ("delete", "delete_tree"):
                facts.deletes.append(self.path(effect.path))
            elif effect.op == "truncate":
                if looks_like_path(effect.path):
                    written.add(effect.path)
                    facts.writes.append(Write(self.path(effect.path), ""))
            else:
                written.add(effect.path)
                facts.writes.append(Write(self.path(effect.path), content))
                if effect.op == "move" and effect.source:
                    facts.deletes.append(self.path(effect.source))
        if name in DELETERS:
            return
        operands = [a for a in args if not a.startswith("-") and a not in written]
        if name in NO_ACCESS and not any(deob.GLOB_HINT.search(a) for a in operands):
            return
        if name in LISTERS and not any(looks_like_path(a) for a in operands):
            facts.reads.append(self.cwd)
        for arg in words[1:]:
            value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
            named = looks_like_path(value) or (name in FILE_READERS and not arg.startswith("-"))
            if value in written or not named:
                continue
            facts.reads.append(self.path(value))

    def network(self, name: str, words: list[str]) -> None:
        facts = self.facts
        hosts, reaches = command_hosts(name, words)
        if hosts or reaches:
            facts.hosts.extend(hosts)
            facts.network = True
        if reaches and not hosts and name in (DOWNLOADERS | REMOTE_SHELLS | SOCKETS):
            facts.unresolved = True

    def nested(self, text: str) -> None:
        inner = _Analysis(self.cwd, self.depth + 1, self.vars)
        inner.run(text)
        self.facts.merge(inner.facts)

    def fallback(self, text: str) -> None:
        """Unstructured text: every absolute path is an access, every URL a host."""
        facts = self.facts
        facts.incomplete = True
        facts.touched.extend(paths_in_text(text))
        hosts = url_hosts(text)
        if hosts:
            facts.hosts.extend(hosts)
            facts.network = True
        if re.search(r"\b(?:env|printenv)\s*(?:$|[|;&>])", text):
            facts.env_reads.append("*")
        facts.texts.append(text)


def analyze_shell(
    text: str, cwd: str, depth: int = 0, variables: dict[str, str] | None = None
) -> CallFacts:
    analysis = _Analysis(cwd, depth, variables or {})
    analysis.run(text)
    return analysis.facts


def _shell_hook(text: str, cwd: str, depth: int) -> CallFacts:
    return analyze_shell(text, cwd, depth)


__all__ = ["analyze_shell", "hosts_in_text", "is_secret_name", "static_output"]
