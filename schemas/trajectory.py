"""The trajectory vocabulary: ATIF (Harbor's Agent Trajectory Interchange Format, v1.8).

Every session reader normalises to these models (from the MIT-licensed `atif` package,
which tracks the spec). Project-specific facts about a session travel in
`Trajectory.extra["rlenv"]` (see `SESSION_EXTRA_KEY`), never in new fields, so the
trajectories we emit stay valid ATIF for other tools.
"""

from atif import Agent, Observation, ObservationResult, Step, ToolCall, Trajectory

SESSION_EXTRA_KEY = "rlenv"
"""Trajectory.extra[SESSION_EXTRA_KEY] holds: source_format, harness, record_id, cwd,
git (dict or None), compacted (bool), truncated (bool)."""

__all__ = [
    "SESSION_EXTRA_KEY",
    "Agent",
    "Observation",
    "ObservationResult",
    "Step",
    "ToolCall",
    "Trajectory",
]
