"""Which queued rows fill one step's micro-batches, from their lengths and due steps alone.

Pure functions over `sizes` (row lengths, oldest row first) and `dues` (the step by which
each row must have gone out), so the choice can be tested and benchmarked without rows;
`train.grpo.packing.Packer` keeps the queue and calls `choose_bins` once per step.

Why the choice looks past the current step: at real agent lengths most rows are longer
than half the budget ("long"), so each needs a micro-batch of its own and only the short
rows can fill the rest. Filling every micro-batch of this step as full as it gets uses
up exactly the short rows that the long rows still queued will need, and those then go
out nearly alone when they fall due. So a step is chosen among a few candidate fills by
what it costs now plus what it leaves behind: the tokens it leaves unused, plus the
tokens a best-fit-decreasing packing of the rows it leaves queued would leave unused
(all but that packing's emptiest micro-batch, which later arrivals can still fill).

Why due steps: rows may wait for better partners, but never past their due step. Rows
due now are placed first (earliest due first, longest first), and a candidate is taken
only if the rows it leaves can all still go out on time, checked by simulating
earliest-due-first steps over them; when no candidate passes, more rows are forced in
(those due one step later, and so on), and as a last resort the step is that
earliest-due-first step itself. Over-full queues (more due rows than steps can hold)
thus degrade to earliest-due-first order: late rows go out first, none starves.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

CANDIDATES = 64
"""Free rows one micro-batch's exact subset sum looks at (the oldest): its cost grows with
rows x budget bits; any further row that still fits is then added first fit."""


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


class Fill:
    """Micro-batches being filled (row indices and loads) and the rows still free, in
    the order they are preferred (earliest due, then oldest)."""

    def __init__(self, sizes: Sequence[int], free: Sequence[int], count: int, budget: int):
        self.sizes, self.budget = sizes, budget
        self.free = list(free)
        self.bins: list[list[int]] = [[] for _ in range(count)]
        self.loads = [0] * count

    def put(self, b: int, i: int) -> None:
        self.bins[b].append(i)
        self.loads[b] += self.sizes[i]
        self.free.remove(i)

    def place(self, rows: Sequence[int]) -> None:
        """Each row, in the order given, into the fullest micro-batch it fits (best fit);
        a row that fits nowhere stays free."""
        for i in rows:
            fits = self.fits(i)
            if fits:
                self.put(max(fits, key=lambda b: self.loads[b]), i)

    def fits(self, i: int) -> list[int]:
        """The micro-batches row `i` still fits in."""
        return [b for b, load in enumerate(self.loads) if load + self.sizes[i] <= self.budget]

    def top_up(self, b: int) -> None:
        """Fill micro-batch `b` as full as it gets: exact subset sum over the first
        CANDIDATES free rows (earlier rows win ties), then first fit of any other."""
        pool = self.free[:CANDIDATES]
        chosen = best_subset([self.sizes[i] for i in pool], self.budget - self.loads[b])
        for k in chosen:
            self.put(b, pool[k])
        for i in list(self.free[CANDIDATES:]):
            if self.loads[b] + self.sizes[i] <= self.budget:
                self.put(b, i)


def _forced_first(sizes: Sequence[int], dues: Sequence[int], forced: Sequence[int]) -> list[int]:
    return sorted(forced, key=lambda i: (dues[i], -sizes[i], i))


def long_rows_first(
    sizes: Sequence[int], dues: Sequence[int], order: Sequence[int], forced: Sequence[int],
    count: int, budget: int,
) -> list[list[int]]:  # fmt: skip
    """Candidate 1: forced rows placed, their micro-batches topped up (fullest first);
    each empty micro-batch then gets the long row that can be filled fullest from the
    free short rows (the oldest on ties), topped up."""
    fill = Fill(sizes, order, count, budget)
    fill.place(_forced_first(sizes, dues, forced))
    left_out = set(forced)  # a forced row with no room now finds none later either
    fill.free = [i for i in fill.free if i not in left_out]
    for b in sorted(range(count), key=lambda b: -fill.loads[b]):
        if fill.bins[b]:
            fill.top_up(b)
    for b in range(count):
        if fill.bins[b]:
            continue
        longs = [i for i in fill.free if 2 * sizes[i] > budget]
        if longs:
            reach, mask = 1, (1 << budget) - 1  # sums of free short rows, under the budget
            for i in [i for i in fill.free if 2 * sizes[i] <= budget][:CANDIDATES]:
                reach = (reach | reach << sizes[i]) & mask
            best = max(longs, key=lambda i: (sizes[i] + _reachable(reach, budget - sizes[i]), -i))
            fill.put(b, best)
        fill.top_up(b)
    return fill.bins


def _reachable(reach: int, hole: int) -> int:
    """The largest sum <= `hole` among those `reach` marks."""
    return (reach & ((1 << (hole + 1)) - 1)).bit_length() - 1


def queue_packed(
    sizes: Sequence[int], dues: Sequence[int], order: Sequence[int], forced: Sequence[int],
    count: int, budget: int,
) -> list[list[int]] | None:  # fmt: skip
    """Candidate 2: the whole queue packed, long rows longest first, each topped up from
    the short rows, then the short rows left; the step takes the micro-batches holding
    forced rows, then the fullest (oldest on ties). None when the forced rows are spread
    over more micro-batches than a step has."""
    longs = sorted((i for i in order if 2 * sizes[i] > budget), key=lambda i: (-sizes[i], i))
    fill = Fill(sizes, [i for i in order if 2 * sizes[i] <= budget], 0, budget)
    for i in longs:
        fill.bins.append([i])
        fill.loads.append(sizes[i])
        fill.top_up(len(fill.bins) - 1)
    while fill.free:
        fill.bins.append([])
        fill.loads.append(0)
        fill.top_up(len(fill.bins) - 1)
    due = set(forced)
    ranked = sorted(
        range(len(fill.bins)),
        key=lambda b: (not due & set(fill.bins[b]), -fill.loads[b], min(fill.bins[b])),
    )
    if any(due & set(fill.bins[b]) for b in ranked[count:]):
        return None
    bins = [fill.bins[b] for b in ranked[:count]]
    return bins + [[] for _ in range(count - len(bins))]


def edf_step(
    sizes: Sequence[int], dues: Sequence[int], order: Sequence[int], now: int, count: int,
    budget: int,
) -> tuple[list[list[int]], bool]:  # fmt: skip
    """The earliest-due-first step: rows due by `now` placed (best fit), then any other in
    `order`, first fit. Also whether every row due by `now` found room."""
    must = [i for i in order if dues[i] <= now]
    fill = Fill(sizes, order, count, budget)
    fill.place(_forced_first(sizes, dues, must))
    on_time = not set(must) & set(fill.free)
    for i in [i for i in fill.free if dues[i] > now]:
        fits = fill.fits(i)
        if fits:
            fill.put(fits[0], i)
    return fill.bins, on_time


def on_time(
    sizes: Sequence[int], dues: Sequence[int], rest: Sequence[int], step: int, count: int,
    budget: int,
) -> bool:  # fmt: skip
    """Whether the rows `rest` (earliest due first) can all go out by their due steps
    from `step` on, as earliest-due-first steps would send them."""
    rest = list(rest)
    while rest:
        bins, ok = edf_step(sizes, dues, rest, step, count, budget)
        if not ok:
            return False
        sent = {i for batch in bins for i in batch}
        rest = [i for i in rest if i not in sent]
        step += 1
    return True


def best_fit_loads(sizes: Sequence[int], rows: Iterable[int], budget: int) -> list[int]:
    """The micro-batch loads of a best-fit-decreasing packing of `rows`."""
    loads: list[int] = []
    for i in sorted(rows, key=lambda i: -sizes[i]):
        fits = [b for b in range(len(loads)) if loads[b] + sizes[i] <= budget]
        if fits:
            loads[max(fits, key=lambda b: loads[b])] += sizes[i]
        else:
            loads.append(sizes[i])
    return loads


def leftover_waste(sizes: Sequence[int], rest: Sequence[int], budget: int) -> int:
    """Tokens a best-fit-decreasing packing of `rest` leaves unused, but for its emptiest
    micro-batch (rows still to arrive may fill that one)."""
    holes = sorted(budget - load for load in best_fit_loads(sizes, rest, budget))
    return sum(holes[:-1])


def _forced_prefixes(
    order: Sequence[int], dues: Sequence[int], now: int, count: int
) -> Iterator[list[int]]:
    """The rows to force in, tried in turn: those due now, then one more (earliest due)
    row at a time for `count` rows, then all rows due a step later at a time."""
    due_now = sum(1 for i in order if dues[i] <= now)
    ends = set(range(due_now, min(len(order), due_now + count) + 1))
    ends.update(k for k in range(due_now + 1, len(order)) if dues[order[k]] > dues[order[k - 1]])
    ends.add(len(order))
    for k in sorted(ends):
        yield list(order[:k])


def choose_bins(
    sizes: Sequence[int], dues: Sequence[int], now: int, count: int, budget: int
) -> list[list[int]]:
    """Row indices per micro-batch for step `now` (see the module docstring). Rows longer
    than `budget` are never placed."""
    order = sorted((i for i in range(len(sizes)) if sizes[i] <= budget), key=lambda i: (dues[i], i))
    for forced in _forced_prefixes(order, dues, now, count):
        best: tuple[int, list[list[int]]] | None = None
        for make in (long_rows_first, queue_packed):
            bins = make(sizes, dues, order, forced, count, budget)
            if bins is None:
                continue
            sent = {i for batch in bins for i in batch}
            rest = [i for i in order if i not in sent]
            if not on_time(sizes, dues, rest, now + 1, count, budget):
                continue
            unused = count * budget - sum(sizes[i] for i in sent)
            cost = unused + leftover_waste(sizes, rest, budget)
            if best is None or cost < best[0]:
                best = (cost, bins)
        if best is not None:
            return best[1]
    return edf_step(sizes, dues, order, now, count, budget)[0]
