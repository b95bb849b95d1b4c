"""The guard: a deterministic reverse proxy that checks every tool call a model makes.

`python -m train.guard --upstream URL --port P` runs it; a trainer starts it in-process
with `GuardServer(GuardOptions(...)).start_background()` and registers each episode's
context with `register(GuardContext(...))`. A blocked call is removed from the
response and replaced by a notice naming the rule; the session's `verdict.json` then
says `blocked: true`, and the trainer sets that episode's reward to 0.
"""

from train.guard.checker import Decision, Guard
from train.guard.context import GuardContext, context_from_task_dir, context_from_tree
from train.guard.facts import CallFacts, ToolCall, Violation
from train.guard.log import read_verdict
from train.guard.options import GuardOptions
from train.guard.proxy import GuardServer
from train.guard.rules import SessionView

__all__ = [
    "CallFacts",
    "Decision",
    "Guard",
    "GuardContext",
    "GuardOptions",
    "GuardServer",
    "SessionView",
    "ToolCall",
    "Violation",
    "context_from_task_dir",
    "context_from_tree",
    "read_verdict",
]
