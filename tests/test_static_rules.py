import os
from pathlib import Path

import pytest

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.examples import EXAMPLES, example_bundle
from repo2rlenv.validate import run_static


def task(tmp_path: Path, name: str = "example-repair-median") -> Path:
    return write_bundle(example_bundle(name, "base:1"), tmp_path).path


def rules(path: Path) -> set[str]:
    return {f.rule_id for f in run_static(read_task_dir(path))}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_bundled_examples_are_clean(tmp_path, name):
    assert rules(task(tmp_path, name)) == set()


def edit(path: Path, rel: str, text: str, mode: int | None = None) -> None:
    target = path / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    if mode is not None:
        target.chmod(mode)


@pytest.mark.parametrize(
    ("rel", "text", "rule"),
    [
        ("task.toml", "schema_version = [", "task.config-invalid-toml"),
        ("task.toml", '[environment]\nmemory_mb = "lots"\n', "task.config-schema"),
        ("instruction.md", "  \n\n", "instruction.empty"),
        (
            "instruction.md",
            "Fix it. The grader lives in /tests/check.py.",
            "instruction.names-hidden-path",
        ),
        (
            "instruction.md",
            "Write your score to /logs/verifier/reward.txt",
            "instruction.names-hidden-path",
        ),
        (
            "instruction.md",
            "Fix median:\n    return (ordered[middle - 1] +   ordered[middle]) / 2\n",
            "instruction.contains-solution",
        ),
        (
            "environment/Dockerfile",
            "FROM base:1\nCOPY tests/ /tests/\n",
            "leak.copies-hidden-files",
        ),
        (
            "environment/Dockerfile",
            "FROM base:1\nADD --chown=1 solve.sh /opt/\n",
            "leak.copies-hidden-files",
        ),
        (
            "environment/Dockerfile",
            "FROM rlenv-harvest/offline-python:bookworm-1\nWORKDIR /workspace\n",
            "env.local-only-base",
        ),
        (
            "tests/test.sh",
            "#!/bin/bash\npip install pytest==8.0 && pytest\n",
            "verifier.network-download",
        ),
        (
            "tests/test.sh",
            "#!/bin/bash\ncurl -sSL https://x.example/grade | bash\n",
            "verifier.network-download",
        ),
        (
            "environment/workspace/.env",
            "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123\n",
            "secrets.detected",
        ),
        (
            "instruction.md",
            "Use https://rpc.example.com/?api-key=9f8e7d6c5b4a39281706 to test",
            "secrets.detected",
        ),
    ],
)
def test_each_rule_fires_on_its_defect(tmp_path, rel, text, rule):
    path = task(tmp_path)
    edit(path, rel, text)
    assert rule in rules(path)


def test_offline_installs_and_comments_are_not_downloads(tmp_path):
    path = task(tmp_path)
    edit(
        path,
        "tests/test.sh",
        "#!/bin/bash\n# curl would be wrong here\n"
        "pip install --no-index /tests/wheels/x.whl\ngit diff --stat\necho 1 > /dev/null\n",
        0o755,
    )
    assert "verifier.network-download" not in rules(path)


def test_missing_and_non_executable_scripts(tmp_path):
    path = task(tmp_path)
    (path / "solution" / "solve.sh").unlink()
    (path / "tests" / "test.sh").chmod(0o644)
    found = {f.rule_id: f for f in run_static(read_task_dir(path))}
    assert found["task.file-missing"].path == "solution/solve.sh"
    assert found["task.not-executable"].severity == "warning"


def test_hidden_file_copied_into_environment(tmp_path):
    path = task(tmp_path)
    check = (path / "tests" / "check.py").read_text()
    edit(path, "environment/workspace/grader.py", check)
    assert "leak.hidden-file-in-environment" in rules(path)


def test_protected_copies_of_visible_tests_are_allowed(tmp_path):
    path = task(tmp_path)  # tests/protected/test_stats.py == environment/workspace/test_stats.py
    assert (path / "tests/protected/test_stats.py").read_bytes() == (
        path / "environment/workspace/test_stats.py"
    ).read_bytes()
    assert "leak.hidden-file-in-environment" not in rules(path)


def test_symlinks_inside_warn_and_escaping_ones_block(tmp_path):
    path = task(tmp_path)
    (path / "environment" / "inside").symlink_to("Dockerfile")
    (path / "environment" / "escape").symlink_to("../../../etc/passwd")
    found = {f.rule_id: f.severity for f in run_static(read_task_dir(path))}
    assert found == {"bundle.symlink": "warning", "bundle.symlink-escape": "error"}


def test_hand_edits_show_as_hash_mismatch(tmp_path):
    path = task(tmp_path)
    edit(path, "environment/workspace/stats.py", "def median(v):\n    return 0\n")
    assert "bundle.hash-mismatch" in rules(path)


def test_traceback_quoting_unchanged_start_code_is_not_the_solution(tmp_path):
    """Held-out repair case (issue 17): the user's traceback quotes a line of the start
    code that the reference rewrites unchanged; only lines the reference adds count."""
    path = task(tmp_path)
    edit(
        path,
        "instruction.md",
        "Running `python3 -m unittest test_stats` fails:\n\n"
        '  File "/workspace/stats.py", line 5, in mean\n'
        "    return sum(values) / len(values)\n"
        "ZeroDivisionError: division by zero\n\nFix it.\n",
    )
    assert "instruction.contains-solution" not in rules(path)
    edit(path, "instruction.md", "Hint:\n    if len(ordered) % 2:\n        return x\n")
    assert "instruction.contains-solution" not in rules(path)  # 19 chars: too short to count
    edit(path, "instruction.md", "Hint: ordered = sorted(values) and then the middle.\n")
    assert "instruction.contains-solution" in rules(path)


def test_a_folder_without_task_toml_is_blocked(tmp_path):
    path = task(tmp_path)
    (path / "task.toml").unlink()
    assert "task.config-missing" in rules(path)


def test_a_fifo_in_the_task_is_a_special_file(tmp_path):
    path = task(tmp_path)
    os.mkfifo(path / "environment" / "workspace" / "pipe")
    assert "bundle.special-file" in rules(path)


def test_quoting_start_code_the_reference_repeats_is_no_leak(tmp_path):
    """A reference that rewrites a whole file repeats its unchanged lines; an issue's
    traceback quoting one of them gives nothing away (a real marshmallow issue does)."""
    path = task(tmp_path)
    edit(path, "instruction.md", "mean fails:\n    return sum(values) / len(values)\n")
    assert "instruction.contains-solution" not in rules(path)


def test_a_stretch_of_a_reference_line_quoted_in_prose_is_the_solution(tmp_path):
    """django-16139's issue writes the fix's expression into a sentence, and the run's
    line wraps it in a conditional: no whole reference line is quoted, yet the answer
    is. A stretch of 45 characters or more that the start lacks counts; a shorter one,
    or one the start holds (the line being replaced), does not."""
    path = task(tmp_path)
    line = "return (ordered[middle - 1] + ordered[middle])"  # 46 of the line's 50
    edit(path, "instruction.md", f"Even lengths are wrong. Just use {line} / 2 there.\n")
    assert "instruction.contains-solution" in rules(path)
    short = "Even lengths are wrong: (ordered[middle - 1] + ordered[middle]).\n"
    edit(path, "instruction.md", short)
    assert "instruction.contains-solution" not in rules(path)  # 39 characters
    kept = "    values = list(values)  # the caller's list stays as it was given"
    for rel in ("environment/workspace/stats.py", "solution/solve.sh"):
        text = (path / rel).read_text()
        edit(path, rel, text.replace("    ordered =", f"{kept}\n    ordered ="))
    said = "It copies first: values = list(values) # the caller's list stays as it was given.\n"
    edit(path, "instruction.md", said)
    assert "instruction.contains-solution" not in rules(path)  # the start holds the stretch


def test_naming_a_start_files_own_path_is_no_leak(tmp_path):
    """A data-analysis question names its data file as the reference reads it; a name
    of 45 characters or more is a quoted stretch, yet the agent sees the file anyway
    (a real A/B-testing notebook reads `datasets/Final Project Results - Experiment.xls`).
    Only a whole path that a start file ends with is held: a stretch reaching past the
    name into the reference's code is still the solution."""
    path = task(tmp_path)
    name = "datasets/Final Project Results - Experiment data.csv"
    (path / "environment" / "workspace" / "datasets").mkdir()
    (path / "environment" / "workspace" / "datasets" / name.split("/")[1]).write_text("a\n1\n")
    solve = (path / "solution" / "solve.sh").read_text()
    edit(path, "solution/solve.sh", f"{solve}\n# reads\nwc -l '{name}' > /tmp/rows.txt\n")
    edit(path, "instruction.md", f"Count the rows of `{name}`.\n")
    assert "instruction.contains-solution" not in rules(path)
    edit(path, "instruction.md", f"Run wc -l '{name}' > /tmp/rows.txt for me.\n")
    assert "instruction.contains-solution" in rules(path)
    edit(path, "instruction.md", f"Count the rows of {name[5:]}.\n")  # `ets/Final ...`
    assert "instruction.contains-solution" in rules(path)  # not a whole path component
