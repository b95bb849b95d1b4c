"""Facts, contexts, sessions and plugins: the parts the corpus exercises only together."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repo2rlenv.bundle import write_bundle
from repo2rlenv.bundle.standard import (
    environment_files,
    grading_files,
    solution_files,
    standard_config,
)
from schemas import SourceRef, TaskBundle
from train.guard.calls import call_facts, parse_arguments
from train.guard.checker import Guard
from train.guard.context import ContextError, GuardContext, context_from_task_dir
from train.guard.facts import ToolCall, Violation
from train.guard.network import hosts_in_text
from train.guard.shell import analyze_shell, static_output


def _call(name: str, args: object) -> ToolCall:
    raw, parsed = parse_arguments(args)
    return ToolCall("c", name, raw, parsed)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo L3Rlc3Rz | base64 -d", "/tests"),
        ("printf '\\x2f%s' solution", "/solution"),
        ("echo stset/ | rev", "/tests"),
        ("echo -e '\\0057logs'", "/logs"),
        ("base64 -d <<< L2xvZ3M=", "/logs"),
    ],
)
def test_static_output_decodes_obfuscation(command: str, expected: str) -> None:
    assert static_output(command) == expected


def test_shell_facts_track_cwd_variables_and_heredocs() -> None:
    facts = analyze_shell(
        "cd /srv && D=data; cat $D/a.csv > out.txt\n"
        "python3 - <<'EOF'\nimport os\nos.remove('/srv/x')\nEOF",
        "/workspace",
    )
    assert "/srv/data/a.csv" in facts.reads
    assert [w.path for w in facts.writes] == ["/srv/out.txt"]
    assert facts.deletes == ["/srv/x"]
    assert facts.code == ["import os\nos.remove('/srv/x')\n"]


def test_shell_facts_from_write_content_sources() -> None:
    facts = analyze_shell("cat > /w/a.py <<'EOF'\nprint(1)\nEOF\necho hi | tee /w/b.txt", "/w")
    assert {(w.path, w.content) for w in facts.writes} == {
        ("/w/a.py", "print(1)\n"),
        ("/w/b.txt", "hi"),
    }


def test_hosts_from_commands_and_conversation() -> None:
    facts = analyze_shell(
        "git clone git@gitlab.com:a/b.git && pip install -i "
        "https://mirror.example.net/simple numpy && curl -s api.x.io/v1",
        "/",
    )
    assert facts.hosts == ["gitlab.com", "mirror.example.net", "api.x.io"]
    assert analyze_shell("pip install -e . && npx tsc && echo https://x.io", "/").hosts == []
    assert hosts_in_text(
        "see https://user:pw@Docs.Example.COM:8443/x and 10.0.0.5, or raw.githubusercontent.com"
    ) >= {"docs.example.com", "10.0.0.5", "raw.githubusercontent.com"}


def test_tool_families_across_harnesses() -> None:
    cases = [
        ("read", {"filePath": "src/a.ts"}, "reads", "/w/src/a.ts"),
        ("Read", {"file_path": "/etc/hosts"}, "reads", "/etc/hosts"),
        ("read_file", {"path": "x.py"}, "reads", "/w/x.py"),
        ("str_replace_editor", {"command": "view", "path": "/w/v.py"}, "reads", "/w/v.py"),
        ("glob", {"pattern": "**/*.py"}, "reads", "/w"),
        ("mcp__fs__read_file", {"path": "/w/y.py"}, "reads", "/w/y.py"),
        ("unknown_tool", {"target": "/tests/x"}, "touched", "/tests/x"),
    ]
    for name, args, attribute, path in cases:
        assert path in getattr(call_facts(_call(name, args), "/w"), attribute), name
    patch = "*** Begin Patch\n*** Update File: a.py\n+x = 1\n*** Delete File: b.py\n*** End Patch"
    facts = call_facts(_call("apply_patch", {"input": patch}), "/w")
    assert [(w.path, w.content) for w in facts.writes] == [("/w/a.py", "x = 1")]
    assert facts.deletes == ["/w/b.py"]
    codex = call_facts(_call("shell", {"command": ["bash", "-lc", "cat /tests/t"]}), "/w")
    assert "/tests/t" in codex.reads


def test_session_scans_only_new_messages_and_rescans_after_compaction() -> None:
    session = Guard(None).session("s")
    session.observe(["start", "see https://a.example.com"])
    assert "a.example.com" in session.view.hosts
    scanned = session._scanned
    session.observe(["start", "see https://a.example.com", "then b.example.org"])
    assert session._scanned == scanned + 1
    session.observe(["compacted: c.example.net"])
    assert {"a.example.com", "b.example.org", "c.example.net"} <= session.view.hosts


def _bundle(tmp_path: Path, guard_table: dict | None) -> Path:
    config = standard_config(
        "guarded-task",
        kind="repair",
        generator="test",
        source=SourceRef(
            dataset="acme/swe-tasks-v2", record_id="session-0123456789", format="pi-v3"
        ),
    )
    if guard_table is not None:
        config.metadata = config.metadata.model_copy(update={"guard": guard_table})
    files = (
        environment_files("img", {"app.py": "x = 1\n"})
        + grading_files("print(1)\n", {"tests/test_app.py": "def test_a(): pass\n"})
        + solution_files("#!/bin/bash\ntrue\n")
    )
    bundle = TaskBundle(
        task_id="guarded-task",
        config=config,
        files=files,
        instruction="Fix app.py; data at https://data.example.org/in.csv",
    )
    write_bundle(bundle, tmp_path)
    return tmp_path / "guarded-task"


def test_context_from_task_dir(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    task = _bundle(
        tmp_path / "rules",
        {"source_repos": ["acme/widgets"], "allowed_hosts": ["mirror.example.net"]},
    )
    context = context_from_task_dir(task, session_id="ep-1")
    assert context.protected_paths == ["/workspace/tests/test_app.py"]
    assert context.dataset_ids == ["acme/swe-tasks-v2"]
    assert context.lookup_terms == ["session-0123456789"]
    guard = Guard(None)
    session = guard.register(context)
    assert "data.example.org" in session.view.hosts
    verdicts = {
        cmd: guard.check_one(session, {"bash"}, _call("bash", {"command": cmd})).rules
        for cmd in (
            "curl https://mirror.example.net/x",
            "git clone https://github.com/acme/widgets",
            "sed -i s/a/b/ tests/test_app.py",
        )
    }
    assert verdicts == {
        "curl https://mirror.example.net/x": [],
        "git clone https://github.com/acme/widgets": ["network.unseen-host", "lookup.task-source"],
        "sed -i s/a/b/ tests/test_app.py": ["tamper.protected-test-edit"],
    }


def test_task_guard_settings_are_validated(tmp_path: Path) -> None:
    task = _bundle(tmp_path, {"unknown_key": 1})
    with pytest.raises(ContextError) as caught:
        context_from_task_dir(task)
    assert caught.value.reason == "context.guard-settings-invalid"


def no_make(call: ToolCall, facts, view) -> list[Violation]:
    """A plugin rule (imported by `module:attribute`)."""
    return [Violation("plugin.no-make", "make is banned")] if "make" in call.arguments else []


def broken_rule(call: ToolCall, facts, view) -> list[Violation]:
    raise RuntimeError("plugin bug")


def test_plugins_by_module_and_task_guard_py(tmp_path: Path) -> None:
    rules_py = tmp_path / "guard.py"
    rules_py.write_text(
        "from train.guard import Violation\n"
        "def no_rm(call, facts, view):\n"
        "    return [Violation('task.no-rm', 'rm')] if facts.deletes else []\n"
        "RULES = [no_rm]\n"
    )
    context = GuardContext(
        session_id="p",
        rules_file=rules_py,
        plugins=["tests.guard.test_rules:no_make", "missing-entry-point"],
    )
    guard = Guard(None)
    session = guard.register(context)
    assert [p.reason for p in session.problems] == ["plugin.not-found"]
    check = {
        cmd: guard.check_one(session, {"bash"}, _call("bash", {"command": cmd})).rules
        for cmd in ("make all", "rm x", "ls")
    }
    assert check == {"make all": ["plugin.no-make"], "rm x": ["task.no-rm"], "ls": []}
    status = guard.status_of(session)
    assert status["rules"] == {"plugin.no-make": 1, "task.no-rm": 1} and status["blocked"]


def test_a_failing_plugin_blocks_instead_of_crashing() -> None:
    guard = Guard(None)
    session = guard.register(
        GuardContext(session_id="b", plugins=["tests.guard.test_rules:broken_rule"])
    )
    assert guard.check_one(session, {"bash"}, _call("bash", {"command": "ls"})).rules == [
        "plugin.error"
    ]


def test_disabled_rules_and_decision_log(tmp_path: Path) -> None:
    guard = Guard(tmp_path)
    session = guard.register(GuardContext(session_id="d", disabled_rules=["network.unseen-host"]))
    assert guard.check_one(session, {"bash"}, _call("bash", {"command": "curl x.io"})).allowed
    assert not guard.check_one(session, {"bash"}, _call("bash", {"command": "env"})).allowed
    lines = [json.loads(x) for x in (tmp_path / "d" / "decisions.jsonl").read_text().splitlines()]
    assert [(d["verdict"], d["rules"]) for d in lines] == [
        ("allow", []),
        ("block", ["secrets.credentials"]),
    ]
    assert all(d["latency_us"] > 0 for d in lines)
    guard.close("d")
    verdict = json.loads((tmp_path / "d" / "verdict.json").read_text())
    assert verdict["blocked"] is True and verdict["decisions"] == 2


FRAME_READ = "python3 -c 'import sys; print(sys._getframe(1).f_locals)'"


def test_atif_scan_audit_marks_the_session_after_the_fact(tmp_path: Path) -> None:
    """A call only atif-scan catches: allowed on the hot path, then flagged."""
    guard = Guard(tmp_path)
    session = guard.register(GuardContext(session_id="audit"))
    decision = guard.check_one(session, {"bash"}, _call("bash", {"command": FRAME_READ}))
    assert decision.allowed and not session.blocked
    (flag,) = guard.audit(session, [decision], "r1")
    assert flag.rules == ["atif.tamper.caller_frame_read"]
    assert session.blocked and session.decisions == 1
    lines = [
        json.loads(x) for x in (tmp_path / "audit" / "decisions.jsonl").read_text().splitlines()
    ]
    assert [d["verdict"] for d in lines] == ["allow", "flag"]
    assert json.loads((tmp_path / "audit" / "verdict.json").read_text())["blocked"] is True


def test_atif_scan_inline_blocks_and_off_ignores() -> None:
    for mode, expected in (("inline", ["atif.tamper.caller_frame_read"]), ("off", [])):
        guard = Guard(None, atif_scan=mode)
        session = guard.register(GuardContext(session_id=mode))
        decision = guard.check_one(session, {"bash"}, _call("bash", {"command": FRAME_READ}))
        assert decision.rules == expected
        assert guard.audit(session, [decision]) == []


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(
        ["bash", "terminal", "read", "write_file", "patch", "apply_patch", "weird"]
    ),
    command=st.text(alphabet=st.characters(codec="utf-8"), max_size=200),
    extra=st.dictionaries(
        st.sampled_from(["path", "content", "cmd", "input", "edits"]), JSONISH, max_size=3
    ),
)
def test_checking_arbitrary_calls_never_raises(name: str, command: str, extra: dict) -> None:
    """Bad input is judged, never crashes: any text, any argument shapes."""
    guard = Guard(None, atif_scan="inline")
    session = guard.session("fuzz")
    decision = guard.check_one(session, {name}, _call(name, {"command": command, **extra}))
    assert "guard.internal-error" not in decision.rules, decision.violations
