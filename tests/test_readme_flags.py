"""The README and the command reference (docs/cli.md) against the real parsers: they
name no flag a command does not have, the reference omits none it has, the committed
reference is the generated one, and every `--help` shows every default.

A flag the README invents sends a new user to an "unrecognized arguments" error; one it
leaves out is a feature nobody finds. Read from `build_parser()`, never from a copy.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from repo2rlenv.commands.reference import parsers

README = Path(__file__).resolve().parents[1] / "README.md"
REFERENCE_MD = README.parent / "docs" / "cli.md"
FLAG = re.compile(r"(?<![\w/-])(--?[a-z][a-z0-9-]*)")


def _parsers() -> dict[str, argparse.ArgumentParser]:
    """Each command as the README writes its invocation (the reference's own list)."""
    return parsers()


PARSERS = _parsers()
SPOKEN = PARSERS | {"python -m smoldataenvs": PARSERS["repo2rlenv mine"]}
"""What a sentence may invoke: the commands, and `python -m smoldataenvs`, which is
`repo2rlenv mine --only notebooks` (its flags are mine's)."""


def _options(parser: argparse.ArgumentParser) -> list[list[str]]:
    """The option strings of each documented action (help and suppressed ones aside)."""
    return [
        action.option_strings
        for action in parser._actions
        if action.option_strings
        and not isinstance(action, argparse._HelpAction)
        and action.help != argparse.SUPPRESS
    ]


def _command_of(text: str) -> str | None:
    """The command `text` invokes (longest match: `python -m train eval` is not train)."""
    for name in sorted(SPOKEN, key=len, reverse=True):
        if text == name or text.startswith(name + " "):
            rest = text[len(name) :].split()
            return None if rest and rest[0] in ("eval",) else name
    return None


def _reference() -> dict[str, str]:
    """docs/cli.md cut into one text per command: its usage line and option column."""
    sections: dict[str, str] = {}
    current = None
    for line in REFERENCE_MD.read_text().splitlines():
        if line.startswith("## `"):
            current = _command_of(line[4:].rstrip("`"))
            assert current is not None, f"docs/cli.md: unknown command in {line!r}"
            sections[current] = ""
        elif current is not None and line.startswith("| `"):
            sections[current] += line.split(" | ")[0] + "\n"
    return sections


REFERENCE = _reference()


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_the_reference_names_exactly_the_flags_the_command_has(command: str) -> None:
    assert command in REFERENCE, f"docs/cli.md omits `{command}`"
    named = set(FLAG.findall(REFERENCE[command]))
    parser = PARSERS[command]
    real = {option for strings in _options(parser) for option in strings}
    assert not named - real, f"docs/cli.md names flags `{command}` lacks: {named - real}"
    omitted = [strings for strings in _options(parser) if not named & set(strings)]
    assert not omitted, f"docs/cli.md omits flags of `{command}`: {omitted}"


def test_the_committed_reference_is_the_generated_one() -> None:
    """docs/cli.md is `python -m repo2rlenv.commands.reference`'s output, byte for byte:
    a flag, default or help changed in a model changes the reference in the same commit."""
    from repo2rlenv.commands.reference import reference

    assert REFERENCE_MD.read_text() == reference(), (
        "docs/cli.md is stale: python -m repo2rlenv.commands.reference > docs/cli.md"
    )


def test_the_readme_links_the_reference_and_the_manifest_schema() -> None:
    text = README.read_text()
    assert "docs/cli.md" in text and "schemas/" in text


GUIDE = README.parent / "docs" / "guide.md"


def _spans() -> list[str]:
    """Inline code spans and code-block lines of the README and the guide."""
    text = README.read_text() + "\n" + GUIDE.read_text()
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    prose = re.sub(r"```[a-z]*\n.*?```", "", text, flags=re.S)
    spans = re.findall(r"`([^`\n]+)`", prose.replace("\n", " "))
    return spans + [line.strip() for block in blocks for line in block.splitlines()]


def test_every_command_written_anywhere_uses_only_its_own_flags() -> None:
    """`mine --no-reproduce` or `python -m smoldataenvs --no-reproduce` in a sentence is as wrong
    as in the reference (README and docs/guide.md)."""
    wrong = []
    for span in _spans():
        for part in re.split(r"\s*(?:&&|\||;)\s*", span):
            part = re.sub(r"^(?:[A-Z_]+=\S+\s+)*(?:\.venv/bin/)?", "", part.strip())
            if _command_of(part) is None:
                part = "repo2rlenv " + part  # `mine --limit 3` in a sentence
            command = _command_of(part)
            if command is None:
                continue
            part = part[len(command) :]
            real = {option for strings in _options(SPOKEN[command]) for option in strings}
            wrong += [f"{command} {flag}" for flag in FLAG.findall(part) if flag not in real]
    assert not wrong, f"README uses flags these commands do not have: {sorted(set(wrong))}"


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_every_help_shows_its_defaults(command: str) -> None:
    """An option with a default says it in `--help`; a positional says what it is."""
    missing = []
    for action in PARSERS[command]._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        name = "/".join(action.option_strings) or action.dest
        if not action.help:
            missing.append(f"{name}: no help")
            continue
        default = action.default
        switch = isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction)
        if switch or default in (None, argparse.SUPPRESS) or default == []:
            continue
        if "default" not in action.help and str(default) not in action.help:
            missing.append(f"{name}: default {default!r} not shown")
    assert not missing, missing
