"""`repo2rlenv push DIR --to HUB_ID`, end to end: choose the tasks, write the card,
stage the dataset in a temporary folder, upload it as one commit. A task rewritten to
the portable base (`--local-base rewrite`) is rewritten in the staged copy only."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from repo2rlenv import __version__
from repo2rlenv.publish.card import card_text
from repo2rlenv.publish.hub_push import require_token, upload
from repo2rlenv.publish.selection import PublishRequest, Selection
from repo2rlenv.publish.staging import stage


@dataclass(frozen=True, kw_only=True)
class PushRequest(PublishRequest):
    repo_id: str
    report: Path | None = None
    private: bool = False


@dataclass(frozen=True)
class PushOutcome:
    selection: Selection
    commit: str | None
    """None for a dry run or when no task was chosen (nothing is uploaded)."""


def push_to_hub(request: PushRequest) -> PushOutcome:
    """Publish the chosen tasks of `request.root`; raises `SourceUnavailable` (one line)
    for a Hub that refuses or cannot be reached."""
    selection = request.select()
    if request.dry_run or not selection.chosen:
        return PushOutcome(selection=selection, commit=None)
    require_token()
    card = card_text(request.repo_id, selection, __version__, request.report)
    with tempfile.TemporaryDirectory(prefix="rlenv-push-") as folder:
        staged = stage(selection, card, Path(folder))
        message = f"repo2rlenv push: {len(selection.chosen)} tasks"
        commit = upload(staged, request.repo_id, private=request.private, message=message)
    return PushOutcome(selection=selection, commit=commit)
