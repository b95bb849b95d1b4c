"""Which published evaluation report speaks for which run.

Reports (`formats.swe_reports`) name instances, not runs, and one folder can hold
several runs of one instance and several reports (mini-swe-agent publishes a run and
its rerun, each with a summary). A run takes the verdict of the report of its instance
that sits closest to it:

1. a run summary whose file name ends in `.<folder>.json` for a folder on the run's
   path (the SWE-bench harness names it `<model>.<run_id>.json`; mini-swe-agent writes
   the run's trajectories under `output/<run_id>/`), before any other;
2. then the report sharing the most leading folders with the run (SWE-bench's
   experiment submissions keep `logs/<instance>/report.json` and `trajs/` in one
   folder).

Equally close reports that disagree give no verdict (`conflicting` names them). A
report that shares no folder with the run still counts when it is the closest one:
mine runs of different experiments from separate folders when their reports are not
beside them.

Records are read in parallel, so reports and runs arrive in any order: the verdicts
are looked up only once every record is read (`SessionPipeline.events`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from threading import Lock

from repo2rlenv.formats.swe_reports import Verdict
from schemas.provenance import RunReport


@dataclass(frozen=True)
class Lookup:
    report: RunReport | None
    conflicting: tuple[str, ...] = ()
    """Equally close reports that disagree (then `report` is None)."""


def _path(record_id: str) -> PurePosixPath:
    return PurePosixPath(record_id.split("#", 1)[0])


def _closeness(report_id: str, verdict: Verdict, run_id: str) -> tuple[int, int]:
    report, run = _path(report_id), _path(run_id)
    folders = run.parent.parts
    named = int(
        verdict.shape == "swebench-run-summary"
        and any(report.name.endswith(f".{folder}.json") for folder in folders)
    )
    shared = 0
    for mine, theirs in zip(report.parent.parts, folders, strict=False):
        if mine != theirs:
            break
        shared += 1
    return named, shared


class RunReports:
    """The verdicts read so far, by instance; safe to add to from worker threads."""

    def __init__(self) -> None:
        self._lock = Lock()
        self._by_instance: dict[str, list[tuple[str, Verdict]]] = {}

    def add(self, record_id: str, verdicts: list[Verdict]) -> None:
        with self._lock:
            for verdict in verdicts:
                self._by_instance.setdefault(verdict.instance_id, []).append((record_id, verdict))

    def __len__(self) -> int:
        return sum(len(found) for found in self._by_instance.values())

    def lookup(self, run_id: str, instance_id: str) -> Lookup:
        found = self._by_instance.get(instance_id, [])
        if not found:
            return Lookup(None)
        scored = [(_closeness(rid, v, run_id), rid, v) for rid, v in found]
        best = max(score for score, _, _ in scored)
        closest = sorted(((rid, v) for score, rid, v in scored if score == best), key=_first)
        if len({v.resolved for _, v in closest}) > 1:
            return Lookup(None, tuple(rid for rid, _ in closest))
        rid, verdict = closest[0]
        return Lookup(RunReport(resolved=verdict.resolved, file=rid, shape=verdict.shape))


def _first(pair: tuple[str, Verdict]) -> str:
    return pair[0]
