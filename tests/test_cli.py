import json

import pytest

from repo2rlenv.cli import build_parser, main


def test_missing_path_is_a_usage_error(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope")]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_folder_without_tasks_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "notes").mkdir()
    assert main(["validate", "--no-run", str(tmp_path)]) == 2
    assert "no task.toml" in capsys.readouterr().err


def test_bad_flag_value_exits_2():
    with pytest.raises(SystemExit) as caught:
        main(["validate", "--reruns", "many", "."])
    assert caught.value.code == 2


def test_static_only_run_labels_unverified(examples_dir, capsys):
    assert main(["validate", "--no-run", "-q", "--json", "-", str(examples_dir)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["labels"] == {"unverified": 4}
    assert all(t["trials"] == [] and t["valid"] for t in report["tasks"])


def test_static_failure_exits_1_and_writes_report(examples_dir, tmp_path, capsys):
    (examples_dir / "example-qa-config" / "instruction.md").write_text("see /solution/solve.sh")
    out = tmp_path / "report.json"
    assert main(["validate", "--no-run", "-q", "--json", str(out), str(examples_dir)]) == 1
    report = json.loads(out.read_text())
    assert report["summary"]["failed_by_rule"] == {"instruction.names-hidden-path": 1}
    table = capsys.readouterr().out
    assert "instruction.names-hidden-path" in table and "needs_repair" in table


def test_examples_command_is_idempotent(tmp_path, capsys):
    assert main(["examples", str(tmp_path), "--base-image", "img:1"]) == 0
    assert main(["examples", str(tmp_path), "--base-image", "img:1"]) == 0
    assert capsys.readouterr().err.count("unchanged") == 4
    assert main(["examples", str(tmp_path), "--base-image", "img:2"]) == 2
    assert main(["examples", str(tmp_path), "--base-image", "img:2", "--force"]) == 0


def test_help_explains_every_command():
    text = build_parser().format_help()
    for command in ("validate", "setup", "examples"):
        assert command in text


FOREIGN = """version = "1.0"

[metadata]
author_name = "Someone Else"

[verifier]
timeout_sec = 30.0

[environment]
allow_internet = false

[environment.healthcheck]
command = "true"
"""


def test_labels_written_into_a_foreign_task_keep_its_fields(tmp_path, capsys):
    task = tmp_path / "foreign"
    for rel, text in {
        "task.toml": FOREIGN,
        "instruction.md": "Print hello.\n",
        "environment/Dockerfile": "FROM debian:12\n",
        "tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
        "solution/solve.sh": "#!/bin/bash\necho hello\n",
    }.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_text(text)
        (task / rel).chmod(0o755 if rel.endswith(".sh") else 0o644)
    assert main(["validate", "--no-run", "-q", "--write-labels", str(task)]) == 0
    import tomllib

    written = tomllib.loads((task / "task.toml").read_text())
    assert written["metadata"]["author_name"] == "Someone Else"
    assert written["environment"]["healthcheck"] == {"command": "true"}
    assert written["environment"]["network_mode"] == "no-network"
    block = written["metadata"]["repo2rlenv"]
    assert block["generator"] == "external"
    assert block["evaluation"]["status"] == "unverified"
