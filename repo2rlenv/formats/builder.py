"""Assemble a strict ATIF trajectory and the action list from a reader's walk.

Readers speak in session terms (a user said, the agent called, a result came back);
the builder enforces what ATIF v1.8 demands: sequential step ids, agent-only fields on
agent steps only, and every tool result in the observation of the agent step that made
the call. Results whose call never appeared are kept too (in a system step, with the
call id in `extra`), so tool-result counts always match the raw record.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from repo2rlenv.formats.base import Action, ParsedSession, UserTurn
from repo2rlenv.formats.calls import Call, ToolResult
from repo2rlenv.formats.history import is_compaction_summary, is_continuation
from repo2rlenv.formats.reasons import fail
from repo2rlenv.formats.text import cap, iso_time
from repo2rlenv.formats.tools import to_action
from schemas.trajectory import SESSION_EXTRA_KEY, Agent, Trajectory

_AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")


class SessionBuilder:
    def __init__(self, harness: str, profile: str | None = None) -> None:
        self.harness = harness
        self.profile = profile or harness
        self.truncated = False
        self._cut: int | None = None
        self._cut_step: int | None = None
        self._steps: list[dict[str, Any]] = []
        self._results: dict[int, list[dict[str, Any]]] = {}
        self._anonymous: dict[int, list[str]] = {}
        self._calls: dict[str, Call] = {}
        self._by_step: dict[int, list[Call]] = {}
        self._order: list[UserTurn | Call | Action] = []

    @property
    def compacted(self) -> bool:
        return self._cut is not None

    def compact(self) -> None:
        """The harness summarised the history here. Everything before is untrusted: the
        session's events restart at this point (the trajectory keeps every step), so
        replay neither uses the earlier file knowledge nor answers the earlier requests."""
        self._cut = len(self._order)
        self._cut_step = len(self._steps) + 1

    # -- steps -----------------------------------------------------------------------
    def step(self, source: str, message: str = "", *, timestamp: Any = None, **fields: Any) -> int:
        step_id = len(self._steps) + 1
        record: dict[str, Any] = {"step_id": step_id, "source": source, "message": message}
        record["timestamp"] = iso_time(timestamp)
        if source != "agent":
            fields = {k: v for k, v in fields.items() if k not in _AGENT_ONLY}
        elif fields.get("llm_call_count") == 0:  # a non-LLM dispatch: no metrics, no reasoning
            fields = {k: v for k, v in fields.items() if k not in ("metrics", "reasoning_content")}
        record.update({k: v for k, v in fields.items() if v is not None})
        self._steps.append(record)
        return step_id

    def user(
        self, text: str, *, typed_request: bool = True, timestamp: Any = None, **fields: Any
    ) -> int:
        """A user step. `typed_request` says whether a person typed it as a request (the
        work replay should answer); `typed_request=False` is text the harness injected
        (skills, reminders, format errors), which stays in the trajectory but asks for
        nothing. A compaction summary sent as a user message is a system step, never a
        request."""
        if is_compaction_summary(text):
            self.compact()
            return self.system(text, timestamp=timestamp, **fields)
        if typed_request and self._cut is not None and is_continuation(text) and not self._asked():
            typed_request = (
                False  # "continue" right after a compaction: the work it means is untrusted
            )
        step_id = self.step("user", text, timestamp=timestamp, **fields)
        if typed_request and text.strip():
            self._order.append(UserTurn(step_id=step_id, text=text))
        return step_id

    def _asked(self) -> bool:
        """A request was made since the last compaction."""
        return any(isinstance(e, UserTurn) for e in self._order[self._cut or 0 :])

    def system(self, text: str, *, timestamp: Any = None, **fields: Any) -> int:
        return self.step("system", text, timestamp=timestamp, **fields)

    def agent(
        self,
        text: str = "",
        *,
        reasoning: str | None = None,
        model: str | None = None,
        timestamp: Any = None,
        **fields: Any,
    ) -> int:
        return self.step(
            "agent",
            text,
            timestamp=timestamp,
            reasoning_content=reasoning or None,
            model_name=model,
            **fields,
        )

    def current_agent(self) -> int | None:
        if self._steps and self._steps[-1]["source"] == "agent":
            return len(self._steps)
        return None

    def add_text(self, step_id: int, text: str, *, reasoning: bool = False) -> None:
        """Append to an agent step (Claude Code writes one line per content block)."""
        if not text:
            return
        key = "reasoning_content" if reasoning else "message"
        record = self._steps[step_id - 1]
        previous = record.get(key) or ""
        record[key] = f"{previous}\n{text}" if previous else text

    # -- calls and results -----------------------------------------------------------
    def call(
        self,
        call_id: Any,
        name: Any,
        args: dict[str, Any],
        *,
        step_id: int | None = None,
        context: dict[str, Any] | None = None,
    ) -> Call:
        step_id = step_id or self.current_agent() or self.agent()
        record = self._steps[step_id - 1]
        calls = record.setdefault("tool_calls", [])
        wanted = call_id if isinstance(call_id, str) and call_id else f"call-{len(self._calls) + 1}"
        unique = wanted
        while any(c["tool_call_id"] == unique for c in calls):
            unique = f"{unique}#"
        tool = name if isinstance(name, str) and name else "unknown"
        calls.append({"tool_call_id": unique, "function_name": tool, "arguments": args})
        call = Call(step_id, unique, tool, args, context=dict(context or {}))
        self._calls[wanted] = self._calls[unique] = call
        self._by_step.setdefault(step_id, []).append(call)
        self._order.append(call)
        return call

    def calls(self) -> list[Call]:
        return [call for calls in self._by_step.values() for call in calls]

    def find(self, call_id: Any) -> Call | None:
        return self._calls.get(call_id) if isinstance(call_id, str) else None

    def result(
        self,
        call_id: Any,
        text: str | None,
        *,
        is_error: bool = False,
        exit_code: int | None = None,
        data: Any = None,
        content: Any = None,
        timestamp: Any = None,
        observed: bool = True,
        **fields: Any,
    ) -> Call | None:
        """Attach a result to the step that made `call_id`; `fields` are extra
        ObservationResult fields (extra, subagent_trajectory_ref) kept verbatim.
        `observed=False` sets the call's result without a second observation entry (one
        raw output shared by several calls, as in a Codex code-mode cell)."""
        call = self.find(call_id)
        if call is not None and not observed:
            call.result = ToolResult(text=text, is_error=is_error, exit_code=exit_code, data=data)
            return call
        entry: dict[str, Any] = {"content": content if content is not None else text}
        entry.update({k: v for k, v in fields.items() if v is not None})
        if call is None:
            holder = self.system("", timestamp=timestamp)
            entry["extra"] = {**(entry.get("extra") or {}), "orphan_call_id": str(call_id)}
            self._results.setdefault(holder, []).append(entry)
            return None
        entry["source_call_id"] = call.call_id
        self._results.setdefault(call.step_id, []).append(entry)
        call.result = ToolResult(text=text, is_error=is_error, exit_code=exit_code, data=data)
        return call

    def observe(self, step_id: int, content: Any = None, **fields: Any) -> None:
        """A result tied to no call id: terminus-2's screen after a step, system events,
        ATIF sub-trajectory references."""
        entry = {"content": content, **{k: v for k, v in fields.items() if v is not None}}
        self._results.setdefault(step_id, []).append(entry)
        if isinstance(content, str) and self._steps[step_id - 1]["source"] == "agent":
            self._anonymous.setdefault(step_id, []).append(content)

    def action(self, action: Action) -> None:
        """An action no tool call made (pi's user-run `!command`)."""
        self._order.append(action)

    # -- output ----------------------------------------------------------------------
    def _settle_anonymous(self) -> None:
        for step_id, texts in self._anonymous.items():
            pending = [c for c in self._by_step.get(step_id, []) if c.result is None]
            for call in pending[:-1]:
                call.result = ToolResult()
            if pending:
                pending[-1].result = ToolResult(text="\n".join(texts))

    def finish(
        self,
        *,
        record_id: str,
        source_format: str,
        agent: dict[str, Any],
        session_id: Any = None,
        cwd: Any = None,
        git: Any = None,
        notes: Any = None,
        final_metrics: Any = None,
        subagents: Any = None,
        extra: Any = None,
    ) -> ParsedSession:
        if not any(s["source"] in ("user", "agent") for s in self._steps):
            code = "format.truncated" if self.truncated else "format.no-messages"
            raise fail(code, f"{source_format}: no user or agent turn in {record_id}")
        self._settle_anonymous()
        kept = self._order[self._cut :] if self._cut is not None else self._order
        events = [to_action(self.profile, e) if isinstance(e, Call) else e for e in kept]
        for step_id, results in self._results.items():
            self._steps[step_id - 1]["observation"] = {"results": results}
        cwd = cwd if isinstance(cwd, str) else None
        git = git if isinstance(git, dict) and git else None
        rlenv = {
            "source_format": source_format,
            "harness": self.harness,
            "record_id": record_id,
            "cwd": cwd,
            "git": git,
            "compacted": self.compacted,
            "compacted_at": self._cut_step,
            "truncated": self.truncated,
        }
        try:
            trajectory = Trajectory(
                schema_version="ATIF-v1.8",
                session_id=session_id if isinstance(session_id, str) else None,
                agent=_agent(agent),
                steps=self._steps,  # dicts: validated once here (Step models would be re-checked)
                notes=notes if isinstance(notes, str) else None,
                final_metrics=final_metrics,
                subagent_trajectories=subagents or None,
                extra={**(extra if isinstance(extra, dict) else {}), SESSION_EXTRA_KEY: rlenv},
            )
        except ValidationError as exc:
            raise fail("format.invalid-atif", f"{source_format}: {cap(str(exc), 300)}") from exc
        # Every field below is already typed: the trajectory was just validated, the
        # events are validated models, the rest are checked strings and flags. Validating
        # the whole session again would only re-check them (tests/formats proves the
        # result still validates strictly).
        return ParsedSession.model_construct(
            trajectory=trajectory,
            source_format=source_format,
            harness=self.harness,
            cwd=cwd,
            git=git,
            compacted=self.compacted,
            compacted_at=self._cut_step,
            dropped_events=self._cut or 0,
            truncated=self.truncated,
            events=events,
        )


def _agent(fields: dict[str, Any]) -> Agent:
    name = fields.get("name") if isinstance(fields.get("name"), str) else None
    version = fields.get("version") if isinstance(fields.get("version"), str) else None
    clean = {"name": name or "unknown", "version": version or "unknown"}
    for key, kind in (("model_name", str), ("tool_definitions", list), ("extra", dict)):
        if isinstance(fields.get(key), kind):
            clean[key] = fields[key]
    if isinstance(clean.get("tool_definitions"), list):
        clean["tool_definitions"] = [d for d in clean["tool_definitions"] if isinstance(d, dict)]
    return Agent.model_validate(clean)
