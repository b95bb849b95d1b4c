"""`repo2rlenv validate`: prove each task in a real container, and say why when it fails."""

# semantic_rules registers the semantic.* rules with static_check: imported for that.
from repo2rlenv.validate import semantic_rules  # noqa: F401
from repo2rlenv.validate.cache import ResultCache
from repo2rlenv.validate.findings import RULES, Finding
from repo2rlenv.validate.report import TaskReport, ValidateOptions, ValidationReport
from repo2rlenv.validate.runner import ProgressSink, validate_one, validate_tasks
from repo2rlenv.validate.static_rules import run_static

__all__ = [
    "RULES",
    "Finding",
    "ProgressSink",
    "ResultCache",
    "TaskReport",
    "ValidateOptions",
    "ValidationReport",
    "run_static",
    "validate_one",
    "validate_tasks",
]
