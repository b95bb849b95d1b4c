"""Every check `validate` runs on a task's files before any container: the one registry.

Structural rules (`static_rules`: config, files, links, hash, instruction, secrets, leaks,
offline verifier) then semantic ones (`semantic_rules`: is the task about something
real; `constant_answer`: does a qa answer need the data at all). A new check is a
function `TaskTree -> Iterable[Finding]`, one entry here, its rule ids in
`findings.RULES`, and its tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from repo2rlenv.bundle import TaskTree
from repo2rlenv.validate import constant_answer, semantic_rules, static_rules
from repo2rlenv.validate.findings import Finding

StaticCheck = Callable[[TaskTree], Iterable[Finding]]

STATIC_CHECKS: dict[str, StaticCheck] = {
    "config_parses": static_rules.config_parses,
    "required_files": static_rules.required_files,
    "links_and_special_files": static_rules.links_and_special_files,
    "recorded_hash": static_rules.recorded_hash,
    "instruction_text": static_rules.instruction_text,
    "secrets": static_rules.secrets,
    "hidden_files_stay_hidden": static_rules.hidden_files_stay_hidden,
    "verifier_stays_offline": static_rules.verifier_stays_offline,
    "base_image_is_portable": static_rules.base_image_is_portable,
    "environment_bound_tests": static_rules.environment_bound_tests,
    "instruction_is_a_request": semantic_rules.instruction_is_a_request,
    "no_host_paths": semantic_rules.no_host_paths,
    "file_names_are_posix": semantic_rules.file_names_are_posix,
    "qa_answer_not_from_errors": semantic_rules.qa_answer_not_from_errors,
    "reference_reaches_the_verifier": semantic_rules.reference_reaches_the_verifier,
    "qa_answer_not_guessable": constant_answer.qa_answer_not_guessable,
}


def run_static(tree: TaskTree, *, strict_secrets: bool = False) -> list[Finding]:
    """The findings of every check, in registry order. `strict_secrets`: a public
    checkout's secret-shaped file (a `secrets.public-checkout` warning) is an error,
    `secrets.detected`, as for any other file."""
    findings = [finding for check in STATIC_CHECKS.values() for finding in check(tree)]
    if strict_secrets:
        findings = [
            f.model_copy(update={"rule_id": "secrets.detected", "severity": "error"})
            if f.rule_id == "secrets.public-checkout"
            else f
            for f in findings
        ]
    return findings
