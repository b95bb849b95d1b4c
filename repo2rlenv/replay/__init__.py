"""Replaying a session's actions over a virtual workspace (never the real filesystem)."""

from repo2rlenv.replay.replay import CommandRecord, Replay, TurnRecord, replay
from repo2rlenv.replay.workspace import FileState, VirtualWorkspace

__all__ = ["CommandRecord", "FileState", "Replay", "TurnRecord", "VirtualWorkspace", "replay"]
