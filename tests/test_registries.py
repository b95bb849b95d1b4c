"""Every registered component has tests: each registry entry, or each rule id a check
emits, is named in some test module other than this one. A component added to a
registry without a test that names it fails here."""

from __future__ import annotations

import ast
import inspect
import re
from functools import cache
from pathlib import Path

import pytest

from repo2rlenv.formats import READERS
from repo2rlenv.kinds import KINDS
from repo2rlenv.runners import RUNNERS
from repo2rlenv.runtime.registry import RUNTIMES
from repo2rlenv.validate.checks import STATIC_CHECKS
from repo2rlenv.validate.findings import RULES
from repo2rlenv.validate.probes import PROBES
from train.guard.rules import BUILTIN_RULES
from train.harnesses.registry import PROFILES

TESTS = Path(__file__).resolve().parent


@cache
def words_in_tests() -> str:
    """The string literals and names of every test module but this one."""
    words: list[str] = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name == Path(__file__).name:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                words.append(node.value)
            elif isinstance(node, ast.Name | ast.alias | ast.Attribute):
                words.append(getattr(node, "id", None) or getattr(node, "attr", None) or "")
    return "\n".join(words)


def named_in_tests(name: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", words_in_tests()) is not None


def emitted_rules(check: object) -> list[str]:
    """The registered rule ids a check's source names (what it can report)."""
    source = inspect.getsource(check)  # type: ignore[arg-type]
    return sorted(rule for rule in RULES if f'"{rule}"' in source)


REGISTRIES = {
    "reader": sorted(READERS),
    "kind": sorted(KINDS),
    "probe": sorted(PROBES),
    "harness": sorted(PROFILES),
    "runtime": sorted(RUNTIMES),
    "runner": sorted(RUNNERS),
}


@pytest.mark.parametrize(
    ("registry", "name"),
    [(registry, name) for registry, names in REGISTRIES.items() for name in names],
)
def test_every_registered_component_is_named_in_a_test(registry: str, name: str) -> None:
    assert named_in_tests(name), f"{registry} {name!r} is registered but no test names it"


@pytest.mark.parametrize("check", sorted(STATIC_CHECKS))
def test_every_rule_of_every_static_check_is_tested(check: str) -> None:
    rules = emitted_rules(STATIC_CHECKS[check])
    untested = [rule for rule in rules if not named_in_tests(rule)]
    assert rules or named_in_tests(check), f"{check} names no rule id and no test names it"
    assert untested == [], f"{check}: no test names {untested}"


def test_the_coverage_check_can_fail() -> None:
    assert not named_in_tests("no-such-component-" + "x" * 8)
    assert named_in_tests("repair")


@pytest.mark.parametrize("rule", sorted(BUILTIN_RULES))
def test_every_verdict_of_every_guard_rule_is_tested(rule: str) -> None:
    source = inspect.getsource(BUILTIN_RULES[rule])
    verdicts = sorted(set(re.findall(r'Violation\(\s*"([\w.-]+)"', source)))
    assert verdicts, f"guard rule {rule} names no verdict"
    assert [v for v in verdicts if not named_in_tests(v)] == []


ARCHITECTURE = TESTS.parent / "ARCHITECTURE.md"
TABLED = {
    "repo2rlenv.formats.READERS": READERS,
    "repo2rlenv.kinds.KINDS": KINDS,
    "repo2rlenv.runners.RUNNERS": RUNNERS,
    "repo2rlenv.validate.checks.STATIC_CHECKS": STATIC_CHECKS,
    "repo2rlenv.validate.probes.PROBES": PROBES,
    "repo2rlenv.runtime.registry.RUNTIMES": RUNTIMES,
    "train.harnesses.registry.PROFILES": PROFILES,
    "train.guard.rules.BUILTIN_RULES": BUILTIN_RULES,
}


def documented_names(text: str) -> dict[str, list[str]]:
    """ARCHITECTURE.md's registry table: registry path -> the names its row lists."""
    rows = re.findall(r"^\| [^|]+ \| `([\w.]+)` \| (.*) \|$", text, re.M)
    return {registry: re.findall(r"`([^`]+)`", names) for registry, names in rows}


@pytest.mark.parametrize("registry", sorted(TABLED))
def test_every_registered_name_is_documented(registry: str) -> None:
    documented = documented_names(ARCHITECTURE.read_text())
    assert registry in documented, f"ARCHITECTURE.md has no row for {registry}"
    assert documented[registry] == list(TABLED[registry])


def test_the_documented_names_reader_reads_a_row() -> None:
    table = "| component | registry | names |\n|---|---|---|\n| x | `a.B` | `one` · `two` |\n"
    assert documented_names(table) == {"a.B": ["one", "two"]}


# One minimal record per reader; a reader added without one fails the set check below.
SMALLEST: dict[str, object] = {
    "atif": {"schema_version": "ATIF-v1.2", "steps": []},
    "pi": [{"type": "session", "id": "x", "cwd": "/"}],
    "claude-code": [{"type": "user", "uuid": "u", "message": {}}],
    "codex": [{"type": "event_msg", "payload": {}}],
    "opencode": {"info": {"id": "ses"}, "messages": [{"info": {}, "parts": []}]},
    "hermes": {"session_id": "s", "messages": []},
    "openai-messages": [{"role": "user", "content": "x"}],
    "mini-swe-agent": {"trajectory_format": "mini-swe-agent-1", "messages": []},
    "swe-agent": {"trajectory": [{"action": "ls", "observation": "a"}]},
    "openhands": {"history": [{"action": "run", "args": {"command": "ls"}}]},
}


def test_every_reader_has_a_record_it_is_detected_on() -> None:
    from repo2rlenv.formats import FORMATS

    assert sorted(SMALLEST) == sorted(READERS) == sorted(FORMATS)


@pytest.mark.parametrize("name", sorted(SMALLEST))
def test_every_reader_is_detectable(name: str) -> None:
    from repo2rlenv.formats import detect_format

    assert detect_format(SMALLEST[name]) == name
