"""One guarded episode: its context, the hosts it has seen, its rules and its verdict.

Hosts are cached per session: a harness resends the whole conversation every turn, so
only messages after the last one scanned are read (the last scanned message is
compared by length and hash; on any mismatch, e.g. after compaction, everything is
rescanned and the union kept).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from train.guard.atif_rules import AtifScanRule
from train.guard.context import GuardContext
from train.guard.facts import CallFacts
from train.guard.log import SessionLog
from train.guard.network import hosts_in_text, normalize_host
from train.guard.plugins import PluginProblem, guarded, load_plugins
from train.guard.rules import BUILTIN_RULES, Rule, SessionView


def _repo_slug(value: str) -> str:
    value = re.sub(r"^[a-z+]+://|^git@", "", value.strip().lower())
    value = (
        re.sub(r"^[^/:]+[/:](?=[^/]+/[^/]+)", "", value)
        if value.count("/") >= 2 or ":" in value
        else value
    )
    return value.removesuffix(".git").strip("/")


def lookup_needles(context: GuardContext) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(needles that count only in network calls, needles that count anywhere)."""
    network: list[str] = []
    anywhere: list[str] = []
    for dataset in context.dataset_ids:
        ds = dataset.lower()
        network.append(ds)
        if "/" in ds:
            owner, name = ds.split("/", 1)
            anywhere += [
                f"{owner}___{name}",
                f"datasets--{owner}--{name}",
                f"huggingface.co/datasets/{ds}",
            ]
    for repo in context.source_repos:
        slug = _repo_slug(repo)
        network.append(slug)
        anywhere.append(f"github.com/{slug}")
    for bucket in context.source_buckets:
        lowered = bucket.lower().rstrip("/")
        anywhere.append(lowered)
        network.append(re.sub(r"^[a-z0-9]+://", "", lowered))
    network += [t.lower() for t in context.lookup_terms]
    return tuple(dict.fromkeys(network)), tuple(dict.fromkeys(anywhere))


class Session:
    def __init__(
        self,
        context: GuardContext,
        log_dir: Path | None,
        atif_scan: bool,
    ) -> None:
        self.context = context
        network, anywhere = lookup_needles(context)
        hosts = {normalize_host(h) for h in context.allowed_hosts}
        hosts |= hosts_in_text(context.instruction)
        self.view = SessionView(
            workdir=context.workdir.rstrip("/") or "/",
            hidden=tuple(context.hidden_paths),
            verifier=tuple(context.verifier_paths),
            protected=tuple(context.protected_paths),
            hosts=hosts,
            lookup_network=network,
            lookup_anywhere=anywhere,
        )
        self.disabled = frozenset(context.disabled_rules)
        """Rule ids dropped for this task (a violation with such an id is ignored)."""
        self.rules: list[Rule] = list(BUILTIN_RULES.values())
        plugins, self.plugin_problems = load_plugins(context.plugins, context.rules_file)
        self.rules += [guarded(rule) for rule in plugins]
        self.scanner: Rule | None = AtifScanRule(context.instruction) if atif_scan else None
        self.log = SessionLog(log_dir, context.session_id) if log_dir is not None else None
        self.rule_counts: Counter[str] = Counter()
        self.decisions = 0
        self.blocked_calls = 0
        self.after_response_failures = 0
        """Exchange lines or audits of this session that failed (train.guard.relay)."""
        self._scanned = 0
        self._last: tuple[int, int] | None = None
        self.prepared: dict[tuple[str, str], CallFacts] = {}
        """A call's facts, worked out before its check (`Guard.prepare`)."""
        if self.log is not None:
            self.log.verdict(False, self.rule_counts, 0, 0)

    @property
    def blocked(self) -> bool:
        return self.blocked_calls > 0

    @property
    def problems(self) -> list[PluginProblem]:
        return self.plugin_problems

    def observe(self, texts: list[str]) -> None:
        """Add the hosts of the conversation's user and tool messages."""
        start = 0
        if 0 < self._scanned <= len(texts):
            last = texts[self._scanned - 1]
            if self._last == (len(last), hash(last)):
                start = self._scanned
        for text in texts[start:]:
            self.view.hosts |= hosts_in_text(text)
        if texts:
            self._scanned = len(texts)
            self._last = (len(texts[-1]), hash(texts[-1]))

    def record(self, rules: list[str], count_decision: bool = True) -> None:
        """The verdict file is rewritten when the session first turns blocked (and on
        close), not on every call: the flag is what the reward needs, at once."""
        self.decisions += count_decision
        if rules:
            first = self.blocked_calls == 0
            self.blocked_calls += 1
            self.rule_counts.update(rules)
            if first and self.log is not None:
                self.log.verdict(True, self.rule_counts, self.decisions, self.blocked_calls,
                                 self.after_response_failures)  # fmt: skip

    def close(self) -> None:
        if self.log is not None:
            self.log.verdict(self.blocked, self.rule_counts, self.decisions, self.blocked_calls,
                             self.after_response_failures)  # fmt: skip
            self.log.close()
