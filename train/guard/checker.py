"""The guard's core, without HTTP: sessions, and the verdict on each tool call.

`Guard.check` is what both wire formats call once they have pulled the tool calls out
of a response. A call is first held to the request (declared tool, arguments that parse
to an object), then its facts are computed once and every rule reads them. Allowed
writes whose content would trip a rule mark the file, so running it later is caught
(`tamper.staged-script`).

atif-scan runs in one of three modes: `audit` (default: after the response has gone
out, on the calls that passed; a finding marks the session, so its reward is 0, and
is logged with verdict `flag`), `inline` (before the response, a finding blocks the
call; about 0.2 ms per call more at p50, 0.5 ms at p99), or `off`. Behind the proxy the
audit runs in a worker process (`audit_worker`) and its findings come back through
`apply_audit`; `audit` is the same step run in the caller's thread.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from train.guard.atif_rules import warm
from train.guard.calls import call_facts
from train.guard.code import analyze_code
from train.guard.context import GuardContext
from train.guard.facts import CallFacts, ToolCall, Violation
from train.guard.rules import CONTENT_RULES
from train.guard.session import Session
from train.guard.shell import analyze_shell

SENSITIVE = (
    "/logs",
    "reward.",
    "/tests",
    "/solution",
    "environ",
    "getenv",
    "printenv",
    ".ssh",
    ".aws",
    "/proc",
    "://",
    "TOKEN",
    "SECRET",
    "KEY",
)
SCRIPT_SUFFIXES = (".py", ".sh", ".bash")
MAX_STAGED_CONTENT = 200_000
MAX_PREPARED = 64
"""Facts worked out ahead, per session (a call that never reaches its check, e.g. its
arguments went on after closing once, leaves its facts behind)."""
AtifMode = Literal["audit", "inline", "off"]


@dataclass
class Decision:
    call: ToolCall
    violations: list[Violation] = field(default_factory=list)
    latency_us: float = 0.0

    @property
    def allowed(self) -> bool:
        return not self.violations

    @property
    def rules(self) -> list[str]:
        return [v.rule for v in self.violations]

    def notice(self) -> str:
        """The text a blocked call is replaced with."""
        first = self.violations[0]
        rules = ", ".join(dict.fromkeys(self.rules))
        return (
            f"[guard] Tool call `{self.call.name}` ({self.call.id or 'no id'}) was blocked "
            f"by rule {rules}: {first.detail}. It was not run."
        )


class Guard:
    def __init__(
        self,
        log_dir: Path | None = None,
        *,
        atif_scan: AtifMode = "audit",
        default_context: GuardContext | None = None,
    ) -> None:
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.atif_scan = atif_scan
        if atif_scan == "inline":
            warm()  # inline checks run atif-scan on the response's critical path
        self.default_context = default_context or GuardContext()
        self.sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    # -- sessions ------------------------------------------------------------------
    def register(self, context: GuardContext) -> Session:
        with self._lock:
            old = self.sessions.pop(context.session_id, None)
            if old is not None:
                old.close()
            session = Session(context, self.log_dir, self.atif_scan != "off")
            self.sessions[context.session_id] = session
            return session

    def session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            context = self.default_context.model_copy(update={"session_id": session_id})
            session = self.register(context)
        return session

    def close(self, session_id: str) -> dict[str, object] | None:
        """Ends a session: its final verdict is written and its files closed."""
        with self._lock:
            session = self.sessions.pop(session_id, None)
        if session is None:
            return None
        session.close()
        return self.status_of(session)

    @staticmethod
    def status_of(session: Session) -> dict[str, object]:
        return {
            "session_id": session.context.session_id,
            "blocked": session.blocked,
            "reward_override": 0.0 if session.blocked else None,
            "rules": dict(session.rule_counts),
            "decisions": session.decisions,
            "blocked_calls": session.blocked_calls,
            "after_response_failures": session.after_response_failures,
            "plugin_problems": [p.__dict__ for p in session.problems],
        }

    # -- checks --------------------------------------------------------------------
    def check(
        self, session: Session, declared: set[str], calls: list[ToolCall], request_id: str = ""
    ) -> list[Decision]:
        return [self.check_one(session, declared, call, request_id) for call in calls]

    def check_one(
        self, session: Session, declared: set[str], call: ToolCall, request_id: str = ""
    ) -> Decision:
        start = time.perf_counter()
        try:
            violations = self._violations(session, declared, call)
        except Exception as exc:  # a guard bug must fail closed, not crash
            violations = [Violation("guard.internal-error", f"{type(exc).__name__}: {exc}")]
        decision = Decision(call, violations, (time.perf_counter() - start) * 1e6)
        session.record(decision.rules)
        if session.log is not None:
            session.log.decision(
                {
                    "request_id": request_id,
                    "call_id": call.id,
                    "tool": call.name,
                    "arguments": call.arguments,
                    "verdict": "allow" if decision.allowed else "block",
                    "rules": decision.rules,
                    "details": [v.detail for v in violations],
                    "latency_us": round(decision.latency_us, 1),
                }
            )
        return decision

    @staticmethod
    def prepare(session: Session, call: ToolCall) -> None:
        """Works out a call's facts ahead of its check (they depend on the call and the
        working directory alone), while the rest of its response is still coming."""
        if call.args is None:
            return
        try:
            facts = call_facts(call, session.view.workdir)
        except Exception:  # the check computes them again and fails closed
            return
        if len(session.prepared) >= MAX_PREPARED:
            session.prepared.clear()
        session.prepared[(call.name, call.arguments)] = facts

    def _violations(self, session: Session, declared: set[str], call: ToolCall) -> list[Violation]:
        if call.name not in declared:
            return [Violation("tool.undeclared", f"`{call.name}` is not a tool of this request")]
        if call.args is None:
            return [Violation("tool.arguments-invalid", "arguments do not parse to an object")]
        facts = session.prepared.pop((call.name, call.arguments), None)
        if facts is None:
            facts = call_facts(call, session.view.workdir)
        found = self._run_rules(session, call, facts)
        if not found and session.scanner is not None and self.atif_scan == "inline":
            found = [
                v
                for v in session.scanner(call, facts, session.view)
                if v.rule not in session.disabled
            ]
        if not found:
            self._stage(session, call, facts)
        return found

    def audit(
        self, session: Session, decisions: list[Decision], request_id: str = ""
    ) -> list[Decision]:
        """atif-scan over calls that were allowed and delivered; findings mark the
        session (reward 0) instead of changing a response that has already gone."""
        flagged = []
        for decision in self.audit_targets(session, decisions):
            assert session.scanner is not None
            start = time.perf_counter()
            found = session.scanner(decision.call, CallFacts(), session.view)
            latency_us = (time.perf_counter() - start) * 1e6
            flag = self.apply_audit(session, decision, found, latency_us, request_id)
            if flag is not None:
                flagged.append(flag)
        return flagged

    def audit_targets(self, session: Session, decisions: list[Decision]) -> list[Decision]:
        """The calls an audit looks at (none unless the mode is `audit`)."""
        if self.atif_scan != "audit" or session.scanner is None:
            return []
        return [d for d in decisions if d.allowed]

    @staticmethod
    def apply_audit(
        session: Session,
        decision: Decision,
        found: list[Violation],
        latency_us: float,
        request_id: str = "",
    ) -> Decision | None:
        """Records an audit's findings on the session (wherever the scan ran)."""
        found = [v for v in found if v.rule not in session.disabled]
        if not found:
            return None
        flag = Decision(decision.call, found, latency_us)
        session.record(flag.rules, count_decision=False)
        if session.log is not None:
            session.log.decision(
                {
                    "request_id": request_id,
                    "call_id": decision.call.id,
                    "tool": decision.call.name,
                    "arguments": decision.call.arguments,
                    "verdict": "flag",
                    "rules": flag.rules,
                    "details": [v.detail for v in found],
                    "latency_us": round(latency_us, 1),
                }
            )
        return flag

    @staticmethod
    def _run_rules(session: Session, call: ToolCall, facts: CallFacts) -> list[Violation]:
        found: list[Violation] = []
        for rule in session.rules:
            found += [v for v in rule(call, facts, session.view) if v.rule not in session.disabled]
        return found

    @staticmethod
    def _stage(session: Session, call: ToolCall, facts: CallFacts) -> None:
        """Remember written scripts whose content, if run, would break a rule."""
        for write in facts.writes:
            content = write.content
            if not content or len(content) > MAX_STAGED_CONTENT:
                session.view.tainted.pop(write.path, None)
                continue
            if not _is_script(write.path) or not any(s in content for s in SENSITIVE):
                session.view.tainted.pop(write.path, None)
                continue
            cwd = session.view.workdir
            inner = (
                analyze_code(content, cwd, 1, lambda t, c, d: analyze_shell(t, c, d))
                if write.path.endswith(".py")
                else analyze_shell(content, cwd, 1)
            )
            rules = [
                v.rule
                for rule in CONTENT_RULES
                for v in rule(call, inner, session.view)
                if v.rule not in session.disabled
            ]
            if rules:
                session.view.tainted[write.path] = tuple(dict.fromkeys(rules))
            else:
                session.view.tainted.pop(write.path, None)


def _is_script(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(SCRIPT_SUFFIXES) or "." not in name
