"""semantic.* rules: each catches a real-shaped garbage task and passes a good one.

The garbage task of issue 17 is rebuilt here in its shape (words written for this test):
a qa task whose instruction is a 14.5 KB compaction summary naming the user's home
folder, whose only workspace file is named by a Windows path and holds the error
output of a failed `cat`, and whose expected answer "1" is a word of that error."""

import json
from pathlib import Path

import pytest

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.cli import main
from repo2rlenv.examples import EXAMPLES, example_bundle
from repo2rlenv.examples.session_stories import STORIES
from repo2rlenv.kinds import KINDS, Reject, SessionContext
from repo2rlenv.replay import replay
from repo2rlenv.validate import run_static
from repo2rlenv.validate.reference_writes import reference_writes
from repo2rlenv.validate.semantic_rules import MAX_INSTRUCTION_CHARS
from tests.mining.factory import from_story

CTX = SessionContext(dataset="examples", revision=None, record_id="story", base_image="img:1")

SUMMARY = (
    "This session is being continued from a previous conversation that ran out of "
    "context. The conversation is summarized below:\n"
    "Analysis:\nLet me go through the conversation chronologically.\n\n"
    "Summary:\n1. Primary Request and Intent:\n"
    "   The user asked to set up the API client in C:\\Users\\jdoe\\Documents\\shop-api.\n"
)
ERROR_OUTPUT = (
    "Exit code 1\ncat: 'C:/Users/jdoe/Documents/shop-api/.env': No such file or directory\n"
)


def semantic(path: Path) -> dict[str, str]:
    """rule id -> its worst severity."""
    found: dict[str, str] = {}
    for f in run_static(read_task_dir(path)):
        if f.rule_id.startswith("semantic.") and found.get(f.rule_id) != "error":
            found[f.rule_id] = f.severity
    return found


def story_task(tmp_path: Path, story: str, kind: str) -> Path:
    (bundle,) = [
        o for o in KINDS[kind](replay(from_story(STORIES[story])), CTX) if not isinstance(o, Reject)
    ]
    return write_bundle(bundle, tmp_path).path


def example(tmp_path: Path, name: str) -> Path:
    return write_bundle(example_bundle(name, "base:1"), tmp_path).path


def put(path: Path, rel: str, text: str) -> None:
    target = path / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_bundled_examples_pass_every_semantic_rule(tmp_path, name):
    assert semantic(example(tmp_path, name)) == {}


@pytest.mark.parametrize(
    ("story", "kind"),
    [("textstats", "build"), ("textstats", "extend"), ("stock", "repair"), ("orders", "qa")],
)
def test_mined_story_tasks_pass_every_semantic_rule(tmp_path, story, kind):
    assert semantic(story_task(tmp_path, story, kind)) == {}


def test_the_issue_17_garbage_task_is_caught_on_every_count(tmp_path):
    path = story_task(tmp_path, "orders", "qa")
    for old in (path / "environment/workspace").iterdir():
        old.unlink()
    filler = "\n".join(f"   - Step {n}: edited the client and re-ran it." for n in range(400))
    put(path, "instruction.md", SUMMARY + filler + "\n\nHow many keys does .env hold?\n")
    put(path, "environment/workspace/C:/Users/jdoe/Documents/shop-api/.env", ERROR_OUTPUT)
    put(path, "tests/expected.json", json.dumps({"answer": "1"}) + "\n")
    assert len((path / "instruction.md").read_text()) > 14_000
    found = semantic(path)
    assert found == {
        "semantic.compaction-summary": "error",
        "semantic.instruction-huge": "error",
        "semantic.host-path": "error",
        "semantic.windows-file-name": "error",
        "semantic.workspace-file-is-error": "error",
        "semantic.qa-answer-from-error": "error",
    }


@pytest.mark.parametrize(
    "opening",
    [
        SUMMARY,
        "The conversation history before this point was compacted into the following "
        "summary:\n\n<summary>\n## Goal\nAdd retries.\n</summary>\n",
        "Another language model started to solve this problem and produced a summary of "
        "its thinking process. Use it to build on the work already done.\n",
        # An exported summary whose opening line was cut: its markdown heading remains.
        "Summary:\n## 1. Primary Request and Intent\n\nThe user's requests evolved.\n",
    ],
)
def test_compaction_summaries_of_each_harness(tmp_path, opening):
    path = example(tmp_path, "example-build-wordfreq")
    put(path, "instruction.md", opening)
    assert "semantic.compaction-summary" in semantic(path)


def test_a_request_that_mentions_context_is_not_a_summary(tmp_path):
    path = example(tmp_path, "example-build-wordfreq")
    put(path, "instruction.md", "Summarise the log file's context lines into summary.txt.\n")
    assert semantic(path) == {}


def test_huge_instruction_threshold(tmp_path):
    path = example(tmp_path, "example-build-wordfreq")
    put(path, "instruction.md", "Add a flag.\n" + "x" * (MAX_INSTRUCTION_CHARS - 12))
    assert "semantic.instruction-huge" not in semantic(path)
    put(path, "instruction.md", "Add a flag.\n" + "x" * (MAX_INSTRUCTION_CHARS - 11))
    assert "semantic.instruction-huge" in semantic(path)


@pytest.mark.parametrize(
    "text",
    [
        "Tests fail in /home/alice/src/shop with ImportError",
        "see /Users/Bob.Smith/work/app/main.py",
        "the file C:\\Users\\jdoe\\Documents\\proj\\app.py breaks",
        "open c:/users/jdoe/proj",
        "see /HOME/alice/src",  # the pattern ignores case, so must its clue check
        "café crashed in /home/alice/src",  # non-ASCII text is scanned without the clues
        "DOCUMENTS AND SETTINGS: C:\\Documents and Settings\\jdoe\\app.py",
    ],
)
def test_host_paths_in_the_instruction(tmp_path, text):
    path = example(tmp_path, "example-repair-median")
    put(path, "instruction.md", text + "\n")
    assert semantic(path) == {"semantic.host-path": "error"}


def test_redacted_and_container_paths_are_not_host_paths(tmp_path):
    path = example(tmp_path, "example-repair-median")
    put(path, "instruction.md", "Fix ~/src/app.py; it runs in /workspace and /usr/lib.\n")
    put(path, "environment/workspace/paths.py", 'HOME = "/home/<user>"\nHERE = "$HOME/x"\n')
    assert semantic(path) == {}


def test_host_path_in_quoted_output_is_a_warning(tmp_path):
    """SWE-bench-style issues paste tracebacks: personal data, but the task is sound."""
    path = example(tmp_path, "example-repair-median")
    put(
        path,
        "instruction.md",
        "median() crashes:\n\n```\nTraceback (most recent call last):\n"
        '  File "/home/alice/venv/lib/python3.11/site-packages/stats.py", line 9\n```\n'
        'File "/Users/bob/proj/stats.py", line 3, in median\n',
    )
    assert semantic(path) == {"semantic.host-path": "warning"}
    put(path, "instruction.md", "CI log: /home/runner/work/app and /home/user/x fail.\n")
    assert semantic(path) == {}


def test_host_path_in_a_workspace_file_is_a_warning(tmp_path):
    path = example(tmp_path, "example-repair-median")
    put(path, "environment/workspace/settings.py", 'DATA = "/home/alice/data.csv"\n')
    assert semantic(path) == {"semantic.host-path": "warning"}


def test_backslash_file_name(tmp_path):
    path = example(tmp_path, "example-repair-median")
    put(path, "environment/workspace/src\\app.py", "x = 1\n")
    assert semantic(path) == {"semantic.windows-file-name": "error"}


def test_error_output_only_fires_when_the_file_is_error_output(tmp_path):
    path = example(tmp_path, "example-qa-config")
    put(path, "environment/workspace/errors.md", "# Errors\n\nThe CLI prints `error: bad flag`.\n")
    put(path, "environment/workspace/notes.txt", "1 file changed\n")
    put(path, "environment/workspace/fixtures/bad_flag.txt", "error: unknown flag --x\n")
    assert semantic(path) == {}  # a CLI project's expected-error fixture is data
    put(path, "environment/workspace/notes.txt", "bash: line 1: jq: command not found\n")
    assert semantic(path) == {"semantic.workspace-file-is-error": "error"}


def test_qa_answer_from_error_text_but_not_from_data(tmp_path):
    path = story_task(tmp_path, "orders", "qa")  # the expected answer is "3"
    put(path, "environment/workspace/run.log", "started\nbash: line 3: jq: command not found\n")
    assert semantic(path) == {"semantic.qa-answer-from-error": "error"}
    put(path, "environment/workspace/run.log", "started\nbash: line 4: jq: command not found\n")
    assert semantic(path) == {}
    # A log whose ERROR lines are the data a qa task counts is not error output.
    put(path, "environment/workspace/app.log", "ERROR: 3 retries left\nerror: disk 3 full\n")
    assert semantic(path) == {}


def test_reference_that_changes_nothing_the_tests_see(tmp_path):
    path = story_task(tmp_path, "stock", "repair")
    solve = (path / "solution/solve.sh").read_text()
    put(path, "solution/solve.sh", solve.replace("stock.py", "NOTES.md"))
    assert semantic(path) == {"semantic.reference-unverified": "error"}


def test_reference_reaching_a_module_through_an_import_chain(tmp_path):
    path = story_task(tmp_path, "stock", "repair")
    solve = (path / "solution/solve.sh").read_text()
    put(path, "solution/solve.sh", solve.replace("stock.py", "pkg/levels.py"))
    put(path, "environment/workspace/stock.py", "from pkg.levels import total\n")
    assert semantic(path) == {}


def test_reference_writes_reads_each_style():
    script = (
        "#!/bin/bash\ncd /workspace\nmkdir -p -- pkg\ncat > pkg/a.py <<'RLENV_AB12'\n"
        "x = 1\nRLENV_AB12\nrm -f -- old.py\nprintf 'port=1' > answer.txt\n"
        "sed -i 's/a/b/' /workspace/b.py\ngit apply <<'EOF'\n--- a/c.py\n+++ b/c.py\n"
        "@@ -1 +1 @@\n-a\n+b\nEOF\necho ok | tee -a log.txt > /dev/null\n"
    )
    assert reference_writes(script) == {
        "pkg/a.py": "x = 1\n",
        "old.py": None,
        "answer.txt": None,
        "b.py": None,
        "c.py": None,
        "log.txt": None,
    }
    assert reference_writes("python3 - <<'X'\nopen('a','w')\nX\n") is None
    assert reference_writes("cp fix.py /app/x.py\nmake install\n", "/app") is None


def test_reference_writes_of_a_foreign_app_task():
    """The shape of published Harbor tasks: WORKDIR /app, `cp` from /solution, `cd`."""
    script = (
        "#!/bin/bash\nset -euo pipefail\n"
        'HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"\n'
        'cp "$HERE/fixed.py" /app/churn/pipeline.py\ncp /solution/a.py /app/pkg/\n'
        "cd /app/churn\nsed -i 's/x/y/' train.py\nrm -f /tmp/cache.db\nexit 0\n"
    )
    assert reference_writes(script, "/app") == {
        "churn/pipeline.py": None,
        "pkg/a.py": None,
        "churn/train.py": None,
    }


def test_validate_cli_flags_a_foreign_garbage_task(tmp_path, capsys):
    """A task folder written by hand in Harbor's layout, not by us: `validate --no-run`
    reports the semantic rules by id and exits 1."""
    task = tmp_path / "foreign-task"
    put(
        task,
        "task.toml",
        'schema_version = "1.4"\n\n[task]\nname = "someone/env-keys"\n\n'
        '[environment]\nworkdir = "/app"\n',
    )
    put(
        task, "instruction.md", SUMMARY + "\nHow many keys does .env hold? Write it to /app/a.txt\n"
    )
    put(task, "environment/Dockerfile", "FROM python:3.12-slim\nWORKDIR /app\nCOPY app/ /app/\n")
    put(task, "environment/app/C:\\Users\\jdoe\\Documents\\shop-api\\.env", ERROR_OUTPUT)
    put(
        task,
        "tests/test.sh",
        "#!/bin/bash\ngrep -qx 1 /app/a.txt && echo 1 > /logs/verifier/reward.txt\n",
    )
    put(task, "solution/solve.sh", "#!/bin/bash\necho 1 > /app/a.txt\n")
    assert main(["validate", "--no-run", "-q", "--json", "-", str(task)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert set(report["summary"]["failed_by_rule"]) >= {
        "semantic.compaction-summary",
        "semantic.host-path",
        "semantic.windows-file-name",
        "semantic.workspace-file-is-error",
    }


def test_reference_inside_a_package_the_tests_import_is_seen(tmp_path):
    """moto-style backends: tests import the package, which loads `athena.models` by
    name at run time; no import statement names the module."""
    path = story_task(tmp_path, "stock", "repair")
    solve = (path / "solution/solve.sh").read_text()
    put(path, "solution/solve.sh", solve.replace("stock.py", "moto/athena/models.py"))
    put(path, "environment/workspace/test_stock.py", "from moto import mock_aws\n")
    assert semantic(path) == {}
    put(path, "environment/workspace/test_stock.py", "from boto3 import client\n")
    assert semantic(path) == {"semantic.reference-unverified": "error"}
