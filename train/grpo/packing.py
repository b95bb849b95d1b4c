"""Fills each optimizer step's micro-batches with finished rows under the token budget.

`token_budget` is per micro-batch, as TRL's own `token_budget` is per packed row (one
rank's forward): a step holds `micro_batches` x `token_budget` tokens at most, and no
micro-batch ever goes over the budget. The number of tasks per step varies with their
lengths.

Why a group may be split across steps: a GRPO group matters only for its advantages, and
those are computed per group BEFORE packing (`train.grpo.samples`, over the group's scored
rollouts) and travel in each row. From then on a row's loss depends on nothing but its
own tokens, recorded old log-probabilities and advantage, so the rows of a finished group
are independent samples. Splitting costs little: rows sent a step later are one update
more off-policy, which the clipped importance ratio against the recorded log-probabilities
covers as for any asynchronous row (and `drop_stale` caps); a step no longer holds a
group's zero-mean advantages exactly (the gradient stays unbiased, with a little more
variance). Not splitting costs much: real agent sessions run to tens of thousands of
tokens (benchmarks/packing_bench.py), so a group of 8 is over half a step, whole groups
cannot fill steps evenly, and a group larger than a step could never train.

Order, so staleness stays bounded: a group's rows are due `max_wait` steps (3) after the
group arrives, counted in steps this Packer hands out. A step is packed once the queue
holds `lookahead` steps of tokens (1.5), or rows that need as many steps of
micro-batches, or `max_wait - 1` if more (long rows take one each, whatever their
tokens). Rows due now go in
first; the rest of the step is chosen for how full it is and how well the rows it leaves
behind can still pack, and no choice may leave a row unable to go out by its due step
(`train.grpo.packing_bins`). Rows wait for partners at most until they are due: at real agent
lengths most rows are longer than half a micro-batch, and the short rows that fill the
rest are worth keeping for them.

Too long: a row longer than the budget fits in no micro-batch. It is skipped and counted
(`row.over-budget`), not truncated, because cutting an agent's context or its final
answer would train on a sequence the policy never produced; the rest of its group keeps
its advantages. Gone stale: `drop_stale` drops queued rows (not whole groups) by their own
`model_version` (`row.stale`), so a partly sent group's fresh rows still train.

Use (the trainer's rollout worker): `group = scheduler.next_group(timeout)`, then
`packer.add(build_samples(group))`; `packer.drop_stale(version, max_staleness)` and
`plan = packer.next_step()` before each step; feed `plan.micro_batches` to the trainer,
then `scheduler.set_version(version + 1)` once the new adapter is served.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from train.grpo.packing_bins import best_fit_loads, choose_bins
from train.grpo.samples import GroupSamples
from train.rollout.contract import TrainingRow

PACK_REASONS = {
    "row.over-budget": "a row longer than the per-micro-batch token budget",
    "row.stale": "a queued row whose adapter version fell more than max_staleness behind",
    "group.empty": "a group with no rows (skipped earlier, see train.grpo.samples)",
}
MAX_WAIT = 3
"""Steps a row may wait after its group arrives: under the default max_staleness (4), so a
row's wait for partners never makes it stale by itself."""


class PackSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    micro_batches: int = Field(default=4, ge=1, description="Micro-batches per optimizer step.")
    token_budget: int = Field(default=65536, ge=1, description="Tokens per micro-batch.")

    @property
    def capacity(self) -> int:
        return self.micro_batches * self.token_budget


class StepPlan(BaseModel):
    """One optimizer step: its micro-batches, the groups with rows in it, how full it is."""

    model_config = ConfigDict(extra="forbid")

    micro_batches: list[list[TrainingRow]]
    group_ids: list[int]
    capacity: int = Field(ge=1)

    @property
    def tokens(self) -> int:
        return sum(row.tokens for batch in self.micro_batches for row in batch)

    @property
    def utilisation(self) -> float:
        return self.tokens / self.capacity

    @property
    def rows(self) -> list[TrainingRow]:
        return [row for batch in self.micro_batches for row in batch]


def _plan(
    pending: Sequence[GroupSamples], batches: list[list[tuple[int, int]]], settings: PackSettings
) -> StepPlan | None:
    """The step of `batches` ((group index, row index) per micro-batch) over `pending`."""
    if not any(batches):
        return None
    used = {g for batch in batches for g, _ in batch}
    return StepPlan(
        micro_batches=[[pending[g].rows[i] for g, i in batch] for batch in batches],
        group_ids=[group.group_id for g, group in enumerate(pending) if g in used],
        capacity=settings.capacity,
    )


def pack_first_come(pending: Sequence[GroupSamples], settings: PackSettings) -> StepPlan | None:
    """The naive baseline: whole groups in arrival order, rows filling one micro-batch
    after the other, stopping at the first group that does not fit."""
    batches: list[list[TrainingRow]] = [[]]
    load = 0
    taken: list[int] = []
    for group in pending:
        trial, trial_load = [list(b) for b in batches], load
        ok = True
        for row in group.rows:
            if trial_load + row.tokens > settings.token_budget:
                if len(trial) == settings.micro_batches or row.tokens > settings.token_budget:
                    ok = False
                    break
                trial.append([])
                trial_load = 0
            trial[-1].append(row)
            trial_load += row.tokens
        if not ok:
            break
        batches, load = trial, trial_load
        taken.append(group.group_id)
    if not taken:
        return None
    return StepPlan(micro_batches=batches, group_ids=taken, capacity=settings.capacity)


class Packer:
    """The trainer side's queue of finished rows, handing out one step at a time.

    A step is ready once the queue holds `lookahead` steps' capacity of tokens, or rows
    that need as many steps' micro-batches, or `max_wait - 1` if more (or when `force`
    says to take what there is, e.g. at the end of a run or for a starving trainer):
    more look-ahead gives more rows to choose from, at the price of rows waiting longer.
    A group's rows are due `max_wait` steps after it was added (`steps` counts the steps
    handed out); they go out by then unless the queue holds more due rows than steps can
    carry, and then the most overdue go first. `pending` holds the groups with rows still
    queued, oldest first, each with only those rows, longest first."""

    def __init__(
        self,
        settings: PackSettings | None = None,
        lookahead: float = 1.5,
        max_wait: int = MAX_WAIT,
    ) -> None:
        if lookahead < 1.0:
            raise ValueError(f"packing.bad-lookahead: {lookahead} < 1 step")
        if max_wait < 0:
            raise ValueError(f"packing.bad-max-wait: {max_wait} < 0 steps")
        self.settings = settings or PackSettings()
        self.lookahead = lookahead
        self.max_wait = max_wait
        self.steps = 0
        self._due: dict[int, int] = {}
        self.pending: list[GroupSamples] = []
        self.skipped: Counter[str] = Counter()

    @property
    def pending_tokens(self) -> int:
        return sum(group.tokens for group in self.pending)

    def due(self, group_id: int) -> int:
        """The step by which the queued rows of group `group_id` go out."""
        return self._due[group_id]

    def add(self, samples: GroupSamples) -> bool:
        """Queue a group's rows, longest first; False (and counted) when none can ever
        be packed."""
        budget = self.settings.token_budget
        rows = [row for row in samples.rows if row.tokens <= budget]
        if len(rows) < len(samples.rows):
            self.skipped["row.over-budget"] += len(samples.rows) - len(rows)
        if not rows:
            self.skipped["group.empty"] += 1
            return False
        rows.sort(key=lambda row: -row.tokens)  # stable: equal lengths keep their order
        self.pending.append(samples.model_copy(update={"rows": rows}))
        self._due[samples.group_id] = self.steps + self.max_wait
        return True

    def drop_stale(self, version: int, max_staleness: int) -> int:
        """Drop queued rows whose adapter version is over `max_staleness` behind
        `version`; the number of groups that lost rows."""
        groups, kept = 0, []
        for group in self.pending:
            fresh = [r for r in group.rows if version - r.model_version <= max_staleness]
            if len(fresh) < len(group.rows):
                groups += 1
                self.skipped["row.stale"] += len(group.rows) - len(fresh)
                group = group.model_copy(update={"rows": fresh})
            if fresh:
                kept.append(group)
        self._keep(kept)
        return groups

    def next_step(self, force: bool = False) -> StepPlan | None:
        if not self.pending:
            return None
        rows = [(g, i) for g, group in enumerate(self.pending) for i in range(len(group.rows))]
        sizes = [self.pending[g].rows[i].tokens for g, i in rows]
        dues = [self._due[self.pending[g].group_id] for g, _ in rows]
        if not force and not self._ready(sizes):
            return None
        bins = choose_bins(
            sizes, dues, self.steps, self.settings.micro_batches, self.settings.token_budget
        )
        batches = [[rows[k] for k in batch] for batch in bins]
        plan = _plan(self.pending, batches, self.settings)
        if plan is None:  # the queue holds at least one row, and a row alone always fits
            raise RuntimeError("packing.nothing-fits")
        sent = {row for batch in batches for row in batch}
        self._keep(
            [
                group.model_copy(
                    update={"rows": [r for i, r in enumerate(group.rows) if (g, i) not in sent]}
                )
                for g, group in enumerate(self.pending)
            ]
        )
        self.steps += 1
        return plan

    def _ready(self, sizes: list[int]) -> bool:
        """Enough tokens for `lookahead` steps, or rows that need that many steps'
        micro-batches, or `max_wait - 1` if more: rows longer than half a micro-batch need
        one each, so their tokens understate how many steps they take, and a burst
        arriving on top of them could not all go out by their due steps."""
        if sum(sizes) >= self.lookahead * self.settings.capacity:
            return True
        needed = len(best_fit_loads(sizes, range(len(sizes)), self.settings.token_budget))
        return needed >= max(self.lookahead, self.max_wait - 1) * self.settings.micro_batches

    def _keep(self, groups: list[GroupSamples]) -> None:
        self.pending = [group for group in groups if group.rows]
        self._due = {g.group_id: self._due[g.group_id] for g in self.pending}
