"""Evaluate many checkpoints on one server: `python -m train eval` (issue 8).

The base model is served once and every checkpoint as a LoRA adapter on top of it, in
waves no larger than the server's adapter slots. Each attempt lands in an append-only
ledger, so a killed evaluation resumes where it stopped and reports the same figures.
"""

from train.evaluate.evaluator import Evaluator, RunnerFactory
from train.evaluate.ledger import Attempt, Ledger
from train.evaluate.plan import Checkpoint, EvalPlan, find_checkpoints, plan_waves
from train.evaluate.report import EvalReport, build_report
from train.evaluate.stats import newcombe_difference, wilson_interval

__all__ = [
    "Attempt",
    "Checkpoint",
    "EvalPlan",
    "EvalReport",
    "Evaluator",
    "Ledger",
    "RunnerFactory",
    "build_report",
    "find_checkpoints",
    "newcombe_difference",
    "plan_waves",
    "wilson_interval",
]
