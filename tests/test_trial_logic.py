"""The pure parts of the runtime and of `validate`: reward parsing, archive hand-over,
and the verdict over a set of trial results."""

import io
import tarfile

import pytest

from repo2rlenv.runtime import TrialResult
from repo2rlenv.runtime.archive import RewardError, pack, parse_reward, read_files, sanitize
from repo2rlenv.validate.dynamic import judge, plan


@pytest.mark.parametrize(
    ("files", "headline", "rewards"),
    [
        ({"reward.txt": b"1\n"}, 1.0, {"reward": 1.0}),
        ({"reward.txt": b" 0.25 "}, 0.25, {"reward": 0.25}),
        ({"reward.json": b'{"reward": 0.5, "style": 1}'}, 0.5, {"reward": 0.5, "style": 1.0}),
        ({"reward.json": b'{"a": 0, "b": 1}'}, 0.5, {"a": 0.0, "b": 1.0}),
        ({"reward.json": b'{"reward": 1}', "reward.txt": b"0"}, 1.0, {"reward": 1.0}),
    ],
)
def test_parse_reward(files, headline, rewards):
    assert parse_reward(files) == (headline, rewards)


@pytest.mark.parametrize(
    ("files", "status"),
    [
        ({}, "reward-missing"),
        ({"test-stdout.txt": b"ok"}, "reward-missing"),
        ({"reward.txt": b""}, "reward-invalid"),
        ({"reward.txt": b"pass"}, "reward-invalid"),
        ({"reward.txt": b"2.5"}, "reward-invalid"),
        ({"reward.txt": b"-0.1"}, "reward-invalid"),
        ({"reward.txt": b"nan"}, "reward-invalid"),
        ({"reward.json": b"[1]"}, "reward-invalid"),
        ({"reward.json": b'{"reward": "1"}'}, "reward-invalid"),
        ({"reward.json": b'{"reward": true}'}, "reward-invalid"),
        ({"reward.json": b"{}"}, "reward-invalid"),
    ],
)
def test_parse_reward_rejects(files, status):
    with pytest.raises(RewardError) as caught:
        parse_reward(files)
    assert caught.value.status == status


def _archive(members: list[tarfile.TarInfo], data: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for member in members:
            payload = data.get(member.name)
            if payload is not None:
                member.size = len(payload)
            tar.addfile(member, io.BytesIO(payload) if payload is not None else None)
    return buffer.getvalue()


def _info(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", mode: int = 0o644):
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, mode
    return info


def test_sanitize_keeps_the_workspace_and_drops_escapes():
    raw = _archive(
        [
            _info("workspace", tarfile.DIRTYPE, mode=0o755),
            _info("workspace/a.py", mode=0o4755),
            _info("workspace/inner", tarfile.SYMTYPE, "a.py"),
            _info("workspace/up", tarfile.SYMTYPE, "../etc/passwd"),
            _info("workspace/abs", tarfile.SYMTYPE, "/etc/shadow"),
            _info("workspace/fifo", tarfile.FIFOTYPE),
            _info("workspace/dev", tarfile.CHRTYPE),
            _info("workspace/hard", tarfile.LNKTYPE, "workspace/a.py"),
        ],
        {"workspace/a.py": b"print(1)"},
    )
    clean, dropped = sanitize([raw[:100], raw[100:]])
    with tarfile.open(fileobj=io.BytesIO(clean)) as tar:
        kept = {m.name: m for m in tar.getmembers()}
    assert set(kept) == {"workspace", "workspace/a.py", "workspace/inner"}
    assert kept["workspace/a.py"].mode == 0o755
    assert set(dropped) == {
        "workspace/up",
        "workspace/abs",
        "workspace/fifo",
        "workspace/dev",
        "workspace/hard",
    }


def test_pack_round_trip_with_modes():
    data = pack({"test.sh": (b"#!/bin/bash\n", True), "deep/x/y.txt": (b"y", False)}, "tests")
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        modes = {m.name: m.mode for m in tar.getmembers()}
    assert modes == {
        "tests": 0o755,
        "tests/test.sh": 0o755,
        "tests/deep": 0o755,
        "tests/deep/x": 0o755,
        "tests/deep/x/y.txt": 0o644,
    }
    assert read_files([data]) == {"test.sh": b"#!/bin/bash\n", "deep/x/y.txt": b"y"}


def trial(label: str, reward: float | None = None, status: str = "ok", detail: str = ""):
    return TrialResult(label=label, status=status, reward=reward, detail=detail)


def rules_of(trials):
    return sorted(f.rule_id for f in judge(trials))


@pytest.mark.parametrize(
    ("trials", "expected"),
    [
        (
            [
                trial("reference", 1.0),
                trial("noop", 0.0),
                trial("reference-rerun-1", 1.0),
                trial("noop-rerun-1", 0.0),
            ],
            [],
        ),
        ([trial("reference", 0.0), trial("noop", 0.0)], ["run.reference-failed"]),
        ([trial("reference", 0.5), trial("noop", 0.0)], ["run.reference-failed"]),
        ([trial("reference", 1.0), trial("noop", 1.0)], ["run.noop-passed"]),
        (
            [
                trial("reference", 1.0),
                trial("noop", 0.0),
                trial("reference-rerun-1", 0.0),
                trial("noop-rerun-1", 0.0),
            ],
            ["run.flaky", "run.reference-failed"],
        ),
        (
            [
                trial("reference", 1.0),
                trial("noop", 0.0),
                trial("reference-rerun-1", 1.0),
                trial("noop-rerun-1", 1.0),
            ],
            ["run.flaky", "run.noop-passed"],
        ),
        (
            [trial("reference", status="reward-missing"), trial("noop", status="reward-missing")],
            ["run.reward-missing"],
        ),
        (
            [trial("reference", status="verifier-timeout"), trial("noop", 0.0)],
            ["run.verifier-timeout"],
        ),
        (
            [
                trial("reference", status="reward-invalid"),
                trial("noop", 0.0),
                trial("reference-rerun-1", 1.0),
                trial("noop-rerun-1", 0.0),
            ],
            ["run.flaky", "run.reward-invalid"],
        ),
    ],
)
def test_judge(trials, expected):
    assert rules_of(trials) == expected


def test_plan_pairs_reference_and_noop_reruns():
    labels = [r.label for r in plan(2)]
    assert labels == [
        "reference",
        "noop",
        "reference-rerun-1",
        "noop-rerun-1",
        "reference-rerun-2",
        "noop-rerun-2",
    ]
    assert [r.apply_solution for r in plan(1)] == [True, False, True, False]


def test_a_refused_reference_carries_the_verifiers_evidence():
    """Issue 28: a reference that scored 0 after a clean solve.sh was refused as
    `reference scored 0 (want 1.0). ` and nothing else; the failing tests and the
    verifier's last lines are the evidence of why."""
    log = "\n".join(
        [
            "..F.E",
            "=========================== short test summary info ============================",
            *(
                f"FAILED tests/test_app.py::test_case_{n} - ImportError: cannot import name"
                for n in range(7)
            ),
            "ERROR tests/test_json.py::test_dump - werkzeug 3.1.9 needs flask>=3",
            "8 failed, 3 passed in 0.41s",
            "tests: 11 run, 3 passed, expected 11, canaries intact",
        ]
    )
    reference = TrialResult(
        label="reference", status="ok", reward=0.0, solution_exit_code=0, verifier_log_tail=log
    )
    (finding,) = judge([reference, trial("noop", 0.0)])
    assert finding.rule_id == "run.reference-failed"
    assert "tests/test_app.py::test_case_0" in finding.message
    assert "(+3 more)" in finding.message  # 8 failing tests, 5 named
    assert "tests: 11 run, 3 passed, expected 11" in finding.message
    assert "8 failed, 3 passed" in finding.message
