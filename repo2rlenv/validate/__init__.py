"""`repo2rlenv validate`: prove each task in a real container, and say why when it fails."""

from repo2rlenv.validate.cache import ResultCache
from repo2rlenv.validate.checks import run_static
from repo2rlenv.validate.findings import RULES, Finding
from repo2rlenv.validate.report import TaskReport, ValidateOptions, ValidationReport
from repo2rlenv.validate.runner import ProgressSink, validate_one, validate_tasks

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
