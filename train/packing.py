"""Fills each optimizer step's micro-batches with finished rows under the token budget.

`token_budget` is per micro-batch, as TRL's own `token_budget` is per packed row (one
rank's forward): a step holds `micro_batches` x `token_budget` tokens at most, and no
micro-batch ever goes over the budget. The number of tasks per step varies with their
lengths.

Why a group may be split across steps: a GRPO group matters only for its advantages, and
those are computed per group BEFORE packing (`train.samples`, over the group's scored
rollouts) and travel in each row. From then on a row's loss depends on nothing but its
own tokens, recorded old log-probabilities and advantage, so the rows of a finished group
are independent samples. Splitting costs little: rows sent a step later are one update
more off-policy, which the clipped importance ratio against the recorded log-probabilities
covers as for any asynchronous row (and `drop_stale` caps); a step no longer holds a
group's zero-mean advantages exactly (the gradient stays unbiased, with a little more
variance). Not splitting costs much: real agent sessions run to tens of thousands of
tokens (benchmarks/packing_bench.py), so a group of 8 is over half a step, whole groups
cannot fill steps evenly, and a group larger than a step could never train.

Order, so staleness stays low: groups queue first come, first served, each group's rows
longest first. A step is packed from a bounded look-ahead, the oldest groups holding
`lookahead` steps of tokens (1.5 by default). Each micro-batch starts with the oldest row
still free, so every step takes the `micro_batches` oldest queued rows: a row with n rows
queued ahead of it goes out within n // micro_batches + 1 steps, and the oldest group's
rows go out in consecutive steps. Each micro-batch's hole is then filled as full as
possible (exact subset sum) from the look-ahead, first from groups already passed over
`max_wait` times (2), then from any. A row taken to fill a hole goes out before its turn,
never after it; that freedom to pick the right lengths is what fills the budget, at the
price of a group's rows no longer leaving strictly in queue order.

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

from train.rollouts import TrainingRow
from train.samples import GroupSamples

PACK_REASONS = {
    "row.over-budget": "a row longer than the per-micro-batch token budget",
    "row.stale": "a queued row whose adapter version fell more than max_staleness behind",
    "group.empty": "a group with no rows (skipped earlier, see train.samples)",
}
CANDIDATES = 64
"""Rows one hole's exact subset sum looks at (the oldest free ones): its cost grows with
rows x budget bits; with more, short rows, first fit fills the rest as well."""


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


def best_subset(sizes: Sequence[int], hole: int) -> list[int]:
    """Indices of the subset of `sizes` with the largest sum that is still <= `hole`
    (exact subset sum over a bit set of reachable sums); on ties, earlier items win."""
    if hole <= 0 or not sizes:
        return []
    mask = (1 << (hole + 1)) - 1
    reach = [1]  # reach[i]: bit s set when some subset of sizes[:i] sums to s
    for size in sizes:
        reach.append((reach[-1] | (reach[-1] << size)) & mask)
    total = reach[-1].bit_length() - 1
    picked = []
    for i in range(len(sizes), 0, -1):  # leave out the latest item whenever we can
        if not (reach[i - 1] >> total) & 1:
            picked.append(i - 1)
            total -= sizes[i - 1]
    return picked[::-1]


def seed_and_fill(
    sizes: Sequence[int], due: int, settings: PackSettings, candidates: int = CANDIDATES
) -> list[list[int]]:
    """Indices of `sizes` (oldest first) per micro-batch. Each micro-batch starts with the
    oldest row still free, so the oldest rows always go out, then its hole is filled as
    full as it gets: first from the `due` oldest rows (they waited long enough), then from
    the rest (exact subset sum over the oldest `candidates` free rows, then any free row
    that still fits, oldest first). A row longer than the budget is never placed."""
    free = [i for i, size in enumerate(sizes) if size <= settings.token_budget]
    bins: list[list[int]] = []
    for _ in range(settings.micro_batches):
        if not free:
            bins.append([])
            continue
        batch = [free.pop(0)]
        hole = settings.token_budget - sizes[batch[0]]
        for pool in ([i for i in free if i < due], [i for i in free if i >= due]):
            pool = pool[:candidates]
            chosen = {pool[k] for k in best_subset([sizes[i] for i in pool], hole)}
            batch += sorted(chosen)
            hole -= sum(sizes[i] for i in chosen)
            free = [i for i in free if i not in chosen]
        for i in list(free):
            if sizes[i] <= hole:
                batch.append(i)
                hole -= sizes[i]
                free.remove(i)
        bins.append(batch)
    return bins


def _choose(
    pending: Sequence[GroupSamples], settings: PackSettings, due: int
) -> list[list[tuple[int, int]]]:
    """`seed_and_fill` over the queue's rows: micro-batches as (group index, row index)."""
    rows = [(g, i) for g, group in enumerate(pending) for i in range(len(group.rows))]
    due_rows = sum(len(group.rows) for group in pending[:due])
    sizes = [pending[g].rows[i].tokens for g, i in rows]
    return [[rows[k] for k in batch] for batch in seed_and_fill(sizes, due_rows, settings)]


def _plan(
    pending: Sequence[GroupSamples], batches: list[list[tuple[int, int]]], settings: PackSettings
) -> StepPlan | None:
    if not any(batches):
        return None
    used = {g for batch in batches for g, _ in batch}
    return StepPlan(
        micro_batches=[[pending[g].rows[i] for g, i in batch] for batch in batches],
        group_ids=[group.group_id for g, group in enumerate(pending) if g in used],
        capacity=settings.capacity,
    )


def pack(pending: Sequence[GroupSamples], settings: PackSettings, due: int = 0) -> StepPlan | None:
    """One step from `pending` (oldest group first, each group's rows in queue order);
    the rows of the first `due` groups fill holes before the others. None if empty."""
    return _plan(pending, _choose(pending, settings, due), settings)


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

    A step is ready once the queue holds `lookahead` steps' capacity of tokens (or when
    `force` says to take what there is, e.g. at the end of a run): more look-ahead fills
    steps better, at the price of rows waiting longer (staleness). `pending` holds the
    groups with rows still queued, oldest first, each with only those rows."""

    def __init__(
        self, settings: PackSettings | None = None, lookahead: float = 1.5, max_wait: int = 2
    ) -> None:
        if lookahead < 1.0:
            raise ValueError(f"packing.bad-lookahead: {lookahead} < 1 step")
        self.settings = settings or PackSettings()
        self.lookahead = lookahead
        self.max_wait = max_wait
        self._waited: dict[int, int] = {}
        self.pending: list[GroupSamples] = []
        self.skipped: Counter[str] = Counter()

    @property
    def pending_tokens(self) -> int:
        return sum(group.tokens for group in self.pending)

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
        self.pending = kept
        self._waited = {g.group_id: self._waited.get(g.group_id, 0) for g in kept}
        return groups

    def next_step(self, force: bool = False) -> StepPlan | None:
        wanted = self.lookahead * self.settings.capacity
        if not self.pending or (not force and self.pending_tokens < wanted):
            return None
        window, tokens = [], 0
        for group in self.pending:  # the bounded look-ahead, oldest groups first
            window.append(group)
            tokens += group.tokens
            if tokens >= wanted:
                break
        waited = [self._waited.get(g.group_id, 0) >= self.max_wait for g in window]
        due = waited.index(False) if False in waited else len(window)
        batches = _choose(window, self.settings, due)
        plan = _plan(window, batches, self.settings)
        if plan is None:  # the window holds at least one row, and a row alone always fits
            raise RuntimeError("packing.nothing-fits")
        sent = {row for batch in batches for row in batch}
        left = [
            group.model_copy(
                update={"rows": [r for i, r in enumerate(group.rows) if (g, i) not in sent]}
            )
            for g, group in enumerate(window)
        ]
        self.pending = [group for group in left if group.rows] + self.pending[len(window) :]
        self._waited = {g.group_id: self._waited.get(g.group_id, 0) + 1 for g in self.pending}
        return plan
