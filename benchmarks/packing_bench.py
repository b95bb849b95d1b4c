"""How full do optimizer steps get when `train.grpo.packing.Packer` packs finished rows into
micro-batches under the token budget, against a naive first-come packer of whole groups
on the same stream, and how long do rows wait for it?

Row lengths follow the real agent sessions in the samples folder, fitted to a
log-normal (mu, sigma) of per-call context lengths (`packing_lengths`). Rollouts of one
task share part of that spread (`--task-share` of the log variance, assumed: the samples
hold no task run twice). A rollout cannot outgrow the server's context, so lengths are
capped at `--max-model-len` (default: the token budget, TRL's own default).

Scenarios: the real contexts under both preset budgets (131072 and 65536 tokens per
micro-batch), then the same shape with the median scaled so that a mean group is 1/2,
1/3, 1/4 and 1/8 of a step (a shorter-context model, or bigger steps). Groups arrive one
at a time into the Packer with its defaults (look-ahead and due steps, overridable),
which may split a group's rows over steps; the baseline packs the same queue first
come, first served, whole groups only (`pack_first_come`), and must drop a group larger
than a step. Printed per scenario: budget utilisation (packed tokens / steps x
capacity) of both, the worst step, tasks per step, how many groups were split, over how
many steps a group's rows went out, and how many steps a group's last row waited after
the group arrived (the staleness packing adds; the baseline's for comparison). Then the
real contexts again over a range of due steps (`--max-wait`): utilisation bought with
waiting (more look-ahead than `max_wait - 1` steps changes little: a step also goes once
the queue's rows need that many steps of micro-batches).
Last, a verdict: the real contexts against the target, and their longest wait against
`--max-wait`.

    python benchmarks/packing_bench.py [--groups 600] [--json FILE|-]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.bench_common import write_json  # noqa: E402
from benchmarks.packing_lengths import fit_lognormal, make_stream  # noqa: E402
from train.grpo.packing import Packer, PackSettings, StepPlan, pack_first_come  # noqa: E402
from train.grpo.samples import GroupSamples  # noqa: E402

TARGET = 0.95
REAL_BUDGETS = (131072, 65536)


Run = tuple[list[StepPlan], dict[int, list[int]]]


def run_ours(stream: list[GroupSamples], settings: PackSettings, lookahead: float,
             max_wait: int) -> Run:  # fmt: skip
    """Steps as packed, and per group the steps it arrived before and its rows went out in."""
    packer = Packer(settings, lookahead=lookahead, max_wait=max_wait)
    plans: list[StepPlan] = []
    seen: dict[int, list[int]] = {}
    for group in stream:
        if not packer.add(group):
            continue
        seen[group.group_id] = [len(plans)]
        while (plan := packer.next_step()) is not None:
            for row in plan.rows:
                seen[row.group_id].append(len(plans))
            plans.append(plan)
    return plans, seen


def run_first_come(stream: list[GroupSamples], settings: PackSettings, *_: object) -> Run:
    """Whole groups, first come first served, a step as soon as a step's worth waits."""
    pending: list[GroupSamples] = []
    plans: list[StepPlan] = []
    seen: dict[int, list[int]] = {}
    for group in stream:
        pending.append(group)
        seen[group.group_id] = [len(plans)]
        while sum(g.tokens for g in pending) >= settings.capacity:
            plan = pack_first_come(pending, settings)
            if plan is None:  # the oldest group fits in no step: the baseline drops it
                del seen[pending.pop(0).group_id]
                continue
            for row in plan.rows:
                seen[row.group_id].append(len(plans))
            plans.append(plan)
            taken = set(plan.group_ids)
            pending = [g for g in pending if g.group_id not in taken]
    return plans, seen


def summary(run: Run, seconds: float) -> dict[str, object]:
    """Utilisation, and per group sent: the steps its rows spread over (first to last)
    and the steps its last row waited after the group arrived (the staleness packing
    adds on top of the rollouts' own)."""
    plans, seen = run
    sent = [steps[1:] for steps in seen.values() if len(steps) > 1]
    waits = [max(steps[1:]) - steps[0] for steps in seen.values() if len(steps) > 1]
    spread = [max(s) - min(s) + 1 for s in sent]
    return {
        "steps": len(plans),
        "utilisation": sum(p.tokens for p in plans) / sum(p.capacity for p in plans),
        "worst_step": min(p.utilisation for p in plans),
        "tasks_per_step": statistics.fmean(len(p.group_ids) for p in plans),
        "groups_sent": len(sent),
        "spread_mean": statistics.fmean(spread),
        "spread_max": max(spread),
        "split_share": sum(1 for s in spread if s > 1) / len(spread),
        "wait_mean": statistics.fmean(waits),
        "wait_max": max(waits),
        "pack_ms_per_step": 1000 * seconds / len(plans),
    }


def scenario(name: str, args: argparse.Namespace, mu: float, budget: int) -> dict:
    settings = PackSettings(micro_batches=args.micro_batches, token_budget=budget)
    cap = args.max_model_len or budget
    stream = make_stream(args.groups, args.group_size, mu, args.sigma, args.task_share, cap,
                         args.seed)  # fmt: skip
    counter = Packer(settings)
    for group in stream:
        counter.add(group)
    rows = sum(len(g.rows) for g in stream)
    mean_group = statistics.fmean(g.tokens for g in stream)
    results: dict = {
        "scenario": name,
        "token_budget": budget,
        "groups": len(stream),
        "median_row": round(math.exp(mu)),
        "group_per_step": mean_group / settings.capacity,
        "rows_over_budget": counter.skipped["row.over-budget"] / rows,
    }
    for label, run in (("ours", run_ours), ("first_come", run_first_come)):
        started = time.perf_counter()
        plans = run(stream, settings, args.lookahead, args.max_wait)
        results[label] = summary(plans, time.perf_counter() - started) if plans[0] else None
    return results


def scenarios(args: argparse.Namespace, mu: float) -> list[dict]:
    """The real contexts under both preset budgets, then the real shape scaled so that a
    mean group is a given share of a step (a shorter-context model, or larger steps)."""
    out = [scenario("real contexts", args, mu, budget) for budget in REAL_BUDGETS]
    budget = 65536
    mean_factor = math.exp(args.sigma**2 / 2)
    for share in (1 / 2, 1 / 3, 1 / 4, 1 / 8):
        median = share * args.micro_batches * budget / (args.group_size * mean_factor)
        out.append(scenario(f"group = 1/{round(1 / share)} step", args, math.log(median), budget))
    return out


def sweep(args: argparse.Namespace, mu: float) -> list[dict]:
    """The real contexts under both budgets at each due step in `--sweep`."""
    out = []
    for max_wait in args.sweep:
        for budget in REAL_BUDGETS:
            at = argparse.Namespace(**{**vars(args), "max_wait": max_wait})
            out.append({"max_wait": max_wait, **scenario("real contexts", at, mu, budget)})
    return out


HEAD = (f"{'budget':>6s} {'median':>6s} {'grp/st':>6s} {'over':>5s} {'util':>6s} {'worst':>6s} "
        f"{'tasks':>5s} {'split':>5s} {'spread':>6s} {'wait':>7s} | {'util':>6s} {'wait':>7s} "
        f"{'sent':>5s} {'ratio':>6s}")  # fmt: skip
LEGEND = (
    f"target: >= {TARGET:.0%} utilisation. Left of '|' the Packer (rows), right of it the "
    "first-come baseline (whole groups).\ngrp/st: a mean group's share of a step; over: rows "
    "longer than the budget (skipped); split: "
    "groups whose rows went out in more than one step; spread: steps a group's rows went "
    "out over (mean/max);\nwait: steps from a group's arrival to its last row's step "
    "(mean/max), the staleness packing adds; sent: groups the baseline could send at all"
)


def row_line(r: dict) -> str:
    ours, naive = r["ours"], r["first_come"]
    line = (f"{r['token_budget']:6d} {r['median_row']:6d} {r['group_per_step']:6.2f} "
            f"{r['rows_over_budget']:5.1%} ")  # fmt: skip
    if ours is None:
        return line + "nothing packed"
    line += (f"{ours['utilisation']:6.1%} {ours['worst_step']:6.1%} "
             f"{ours['tasks_per_step']:5.2f} {ours['split_share']:5.0%} "
             f"{ours['spread_mean']:4.2f}/{ours['spread_max']:<2d}"
             f"{ours['wait_mean']:4.2f}/{ours['wait_max']:<2d} | ")  # fmt: skip
    if naive is None:
        return line + "no group fits a step"
    ratio = ours["utilisation"] / naive["utilisation"]
    return line + (f"{naive['utilisation']:6.1%} {naive['wait_mean']:4.2f}/"
                   f"{naive['wait_max']:<2d} {naive['groups_sent'] / r['groups']:5.0%} "
                   f"{ratio:5.2f}x")  # fmt: skip


def show(results: list[dict], swept: list[dict], args: argparse.Namespace) -> None:
    print(f"{args.groups} groups of {args.group_size}, {args.micro_batches} micro-batches per "
          f"step, look-ahead {args.lookahead} steps, rows due {args.max_wait} steps after their "
          "group arrives")  # fmt: skip
    print(f"{'scenario':18s} {HEAD}")
    for r in results:
        print(f"{r['scenario']:18s} {row_line(r)}")
    if swept:
        print("\nreal contexts by due step (steps a row may wait after its group arrives)")
        print(f"{'due after':>18s} {HEAD}")
        for r in swept:
            print(f"{r['max_wait']:18d} {row_line(r)}")
    print(LEGEND)
    print(verdict(results, args.max_wait))


def verdict(results: list[dict], max_wait: int) -> str:
    """The real contexts against the target, and their longest wait against `max_wait`."""
    real = [r for r in results if r["scenario"] == "real contexts" and r["ours"]]
    utils = ", ".join(f"{r['ours']['utilisation']:.1%} at {r['token_budget']}" for r in real)
    wait = max(r["ours"]["wait_max"] for r in real)
    ok = all(r["ours"]["utilisation"] >= TARGET for r in real) and wait <= max_wait
    return (f"{'PASS' if ok else 'MISS'}: real contexts {utils} (target >= {TARGET:.0%}); "
            f"longest wait {wait} steps (rows due after {max_wait})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=Path, default=REPO.parent / "shared" / "samples" / "real")
    parser.add_argument("--groups", type=int, default=600)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--micro-batches", type=int, default=4)
    parser.add_argument("--max-model-len", type=int, default=None)
    parser.add_argument("--task-share", type=float, default=0.5)
    parser.add_argument("--lookahead", type=float, default=Packer().lookahead)
    parser.add_argument("--max-wait", type=int, default=Packer().max_wait)
    parser.add_argument("--sweep", type=int, nargs="*", default=[1, 2, 3, 4],
                        help="--max-wait values for the real contexts (none: skip)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write results as JSON ('-' = stdout)")
    args = parser.parse_args()

    mu, args.sigma, calls, sessions = fit_lognormal(args.samples)
    print(f"fitted on {calls} calls in {sessions} real sessions: context ~ log-normal, median "
          f"{math.exp(mu):.0f} tokens, sigma {args.sigma:.2f}")  # fmt: skip
    results, swept = scenarios(args, mu), sweep(args, mu)
    show(results, swept, args)
    if args.json:
        text = json.dumps({"mu": mu, "sigma": args.sigma, "scenarios": results,
                           "max_wait_sweep": swept}, indent=2)  # fmt: skip
        write_json(text, args.json)


if __name__ == "__main__":
    main()
