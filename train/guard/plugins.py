"""Rules a task or a deployment adds: entry points and a task's own guard.py.

A plugin rule has the built-in signature `(call, facts, view) -> list[Violation]`.
They are found three ways:

- an installed entry point in group `rlenv_harvest.guard_rules` whose name is listed in
  the context's `plugins` (the object is a rule or a list of rules);
- `module:attribute` in `plugins` (imported; same shape);
- a `guard.py` named by `[metadata.guard] rules_file` in the task folder, which defines
  `RULES = [...]`.

A plugin that cannot be loaded is reported with a stable reason and skipped, never
crashes the guard; a plugin that raises while checking counts as `plugin.error` and
the call is blocked (a broken guard must fail closed).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from train.guard.facts import CallFacts, ToolCall, Violation
from train.guard.rules import Rule, SessionView

ENTRY_POINT_GROUP = "rlenv_harvest.guard_rules"


@dataclass(frozen=True)
class PluginProblem:
    source: str
    reason: str
    detail: str


def _as_rules(value: Any) -> list[Rule]:
    if callable(value):
        return [value]
    if isinstance(value, Iterable):
        rules = list(value)
        if all(callable(r) for r in rules):
            return rules
    raise TypeError("not a rule or a list of rules")


def load_plugins(
    names: list[str], rules_file: Path | None
) -> tuple[list[Rule], list[PluginProblem]]:
    rules: list[Rule] = []
    problems: list[PluginProblem] = []
    available = _entry_points() if any(":" not in n for n in names) else {}
    for name in names:
        try:
            if ":" in name:
                module, _, attribute = name.partition(":")
                rules += _as_rules(getattr(importlib.import_module(module), attribute))
            elif name in available:
                rules += _as_rules(available[name].load())
            else:
                problems.append(PluginProblem(name, "plugin.not-found", "no such entry point"))
        except Exception as exc:  # any import failure is a plugin problem
            problems.append(
                PluginProblem(name, "plugin.load-failed", f"{type(exc).__name__}: {exc}")
            )
    if rules_file is not None:
        try:
            rules += _from_file(rules_file)
        except Exception as exc:  # any import failure is a plugin problem
            problems.append(
                PluginProblem(str(rules_file), "plugin.load-failed", f"{type(exc).__name__}: {exc}")
            )
    return rules, problems


@lru_cache(maxsize=1)
def _entry_points() -> dict[str, Any]:
    """Read once: scanning every installed distribution costs tens of milliseconds."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _from_file(path: Path) -> list[Rule]:
    spec = importlib.util.spec_from_file_location(f"_guard_task_rules_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return _as_rules(module.RULES)


def guarded(rule: Rule) -> Callable[[ToolCall, CallFacts, SessionView], list[Violation]]:
    """Wraps a plugin so an exception blocks the call instead of crashing the guard."""

    def run(call: ToolCall, facts: CallFacts, view: SessionView) -> list[Violation]:
        try:
            found = rule(call, facts, view)
        except Exception as exc:  # a plugin bug blocks the call (fail closed)
            name = getattr(rule, "__name__", type(rule).__name__)
            return [Violation("plugin.error", f"{name} raised {type(exc).__name__}")]
        return [v for v in found or [] if isinstance(v, Violation)]

    return run
