"""Deliberately broken tasks, each derived from a good example by one defect.

`BROKEN` maps a task name to (defect applied to a written example, rule id that
`validate` must report for it)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from repo2rlenv.bundle import write_bundle
from repo2rlenv.examples import example_bundle

SOURCE = "example-repair-median"


def _write(path: Path, rel: str, text: str, executable: bool = False) -> None:
    target = path / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    target.chmod(0o755 if executable else 0o644)


def _toml(path: Path, pattern: str, replacement: str) -> None:
    text = (path / "task.toml").read_text()
    new = re.sub(pattern, replacement, text, count=1, flags=re.MULTILINE)
    assert new != text, pattern
    (path / "task.toml").write_text(new)


def reference_fails(path: Path) -> None:
    _write(path, "solution/solve.sh", "#!/bin/bash\necho 'looked at it, seems fine'\n", True)


def noop_passes(path: Path) -> None:
    _write(
        path,
        "tests/test.sh",
        "#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n",
        True,
    )


def flaky_verifier(path: Path) -> None:
    _write(
        path,
        "tests/test.sh",
        "#!/bin/bash\nmkdir -p /logs/verifier\n"
        "echo $(( $(od -An -N1 -tu1 /dev/urandom) % 2 )) > /logs/verifier/reward.txt\n",
        True,
    )


def missing_reward(path: Path) -> None:
    _write(path, "tests/test.sh", "#!/bin/bash\npython3 -I /tests/check.py\n", True)


def reward_out_of_range(path: Path) -> None:
    _write(
        path,
        "tests/test.sh",
        "#!/bin/bash\nmkdir -p /logs/verifier\necho 2.5 > /logs/verifier/reward.txt\n",
        True,
    )


def leak_tests_into_image(path: Path) -> None:
    _write(path, "environment/grader_copy.py", (path / "tests/check.py").read_text())
    _write(
        path,
        "environment/Dockerfile",
        (path / "environment/Dockerfile").read_text() + "COPY grader_copy.py /opt/grader.py\n",
    )


def instruction_names_tests(path: Path) -> None:
    _write(
        path,
        "instruction.md",
        (path / "instruction.md").read_text()
        + "\nThe hidden checks in /tests/check.py must pass.\n",
    )


def symlink_escapes(path: Path) -> None:
    (path / "environment/workspace/hosts").symlink_to("/etc/hosts")


def malformed_toml(path: Path) -> None:
    (path / "task.toml").write_text((path / "task.toml").read_text() + "\n[verifier\nx = 1\n")


def verifier_timeout(path: Path) -> None:
    _toml(path, r"^timeout_sec = 60\.0$", "timeout_sec = 2.0")
    _write(
        path,
        "tests/test.sh",
        "#!/bin/bash\nmkdir -p /logs/verifier\n"
        "echo 0 > /logs/verifier/reward.txt\nsleep 120\necho 1 > /logs/verifier/reward.txt\n",
        True,
    )


BROKEN: dict[str, tuple[Callable[[Path], None], str]] = {
    "broken-reference-fails": (reference_fails, "run.reference-failed"),
    "broken-noop-passes": (noop_passes, "run.noop-passed"),
    "broken-flaky-verifier": (flaky_verifier, "run.flaky"),
    "broken-missing-reward": (missing_reward, "run.reward-missing"),
    "broken-reward-out-of-range": (reward_out_of_range, "run.reward-invalid"),
    "broken-test-leaked-into-image": (leak_tests_into_image, "leak.hidden-file-in-environment"),
    "broken-instruction-names-tests": (instruction_names_tests, "instruction.names-hidden-path"),
    "broken-symlink-escapes": (symlink_escapes, "bundle.symlink-escape"),
    "broken-malformed-toml": (malformed_toml, "task.config-invalid-toml"),
    "broken-verifier-timeout": (verifier_timeout, "run.verifier-timeout"),
}


def write_broken_suite(out: Path, base_image: str) -> dict[str, str]:
    """Writes every broken task under `out`; returns task folder name -> expected rule."""
    expected = {}
    for name, (defect, rule) in BROKEN.items():
        bundle = example_bundle(SOURCE, base_image).model_copy(update={"task_id": name})
        path = write_bundle(bundle, out).path
        defect(path)
        expected[name] = rule
    return expected
