"""`repo2rlenv push`/`pull` against a Hub double (`tests.hub_double`): the real
`huggingface_hub` client, pointed at a local server with HF_ENDPOINT, pushes a mined
folder and pulls it back byte for byte; only verified tasks with a redistributable
licence leave; a missing or refused token is one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.bundle.standard import environment_files, grading_files, standard_config
from repo2rlenv.kinds.common import reference_script
from repo2rlenv.manifest import write_manifest
from repo2rlenv.publish.hub_pull import safe_name
from repo2rlenv.publish.licences import verdict
from schemas import BundleFile, SourceRef, TaskBundle
from schemas.provenance import CheckOutcome, EvaluationLabel
from tests.hub_double import READ_ONLY, WritableHub, hub_double

pytestmark = pytest.mark.timeout(120)

REPO_ID = "someone/mined"
ROOT = Path(__file__).resolve().parents[2]


def _task(
    root: Path,
    name: str,
    *,
    licence: str | None,
    status: str = "verified",
    base: str = "python:3.12-slim",
) -> Path:
    files = [
        *environment_files(base, {"app.py": f"value = '{name}'\n"}),
        *grading_files("print('ok')\n", protected={"test_visible.py": "def test_a(): pass\n"}),
        BundleFile(path="tests/test_hidden.py", content=b"def test_b():\n    assert True\n"),
        BundleFile(
            path="solution/solve.sh",
            content=reference_script({"app.py": "value = 1\n"}).encode(),
            executable=True,
        ),
    ]
    source = SourceRef(dataset="someone/sessions", record_id=name, format="pi-v3", license=licence)
    config = standard_config(name, kind="repair", source=source, generator="repo2rlenv-sessions")
    block = config.metadata.repo2rlenv
    assert block is not None
    block.evaluation = EvaluationLabel(status=status, reason_codes=["oracle.passed"])  # type: ignore[arg-type]
    block.checks = [CheckOutcome(rule_id="oracle", status="passed", rewards=[1.0])]
    bundle = TaskBundle(task_id=name, config=config, instruction="Fix it.\n", files=files)
    return write_bundle(bundle, root / "repair").path


@pytest.fixture
def mined(tmp_path: Path) -> Path:
    root = tmp_path / "mined"
    _task(root, "open-one", licence="MIT")
    _task(root, "open-two", licence="apache-2.0")
    _task(root, "unproven", licence="mit", status="unverified")
    _task(root, "no-licence", licence=None)
    _task(root, "reserved", licence="cc-by-nd-4.0")
    write_manifest(root)
    return root


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[WritableHub]:
    with hub_double() as double:
        yield double


def _cli(hub_url: str, tmp_path: Path, *args: str, token: str | None = "writer", **hf: str):
    """`repo2rlenv ARGS` against the Hub at `hub_url`, with only these HF_ settings
    (`hf`: more of them, e.g. HF_HUB_OFFLINE="1")."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env |= {
        "HF_ENDPOINT": hub_url,
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        **hf,
    }
    if token is not None:
        env["HF_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "repo2rlenv", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
    )


def _tree(folder: Path) -> dict[str, tuple[bytes, bool]]:
    return {
        path.relative_to(folder).as_posix(): (path.read_bytes(), os.access(path, os.X_OK))
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_push_then_pull_gives_the_task_folders_back_byte_for_byte(hub, mined, tmp_path) -> None:
    report = tmp_path / "report.json"
    report.write_text(
        json.dumps(
            {
                "pipeline": "sessions",
                "emitted": 5,
                "unchanged": 0,
                "skipped": {"anchor.no-repository": 3},
            }
        )
    )
    pushed = _cli(hub.url, tmp_path, "push", str(mined), "--to", REPO_ID, "--report", str(report))
    assert pushed.returncode == 0, pushed.stderr
    files = hub.files(REPO_ID)
    assert {"README.md", "manifest.jsonl", "rlenv-publish.json"} <= set(files)
    out = tmp_path / "pulled"
    pulled = _cli(hub.url, tmp_path, "pull", REPO_ID, "--out", str(out))
    assert pulled.returncode == 0, pulled.stderr
    for name in ("open-one", "open-two"):
        before, after = mined / "repair" / name, out / "repair" / name
        assert _tree(after) == _tree(before)  # bytes and executable bits
        assert read_task_dir(after).content_hash == read_task_dir(before).content_hash
    assert sorted(p.name for p in (out / "repair").iterdir()) == ["open-one", "open-two"]
    assert not (out / ".cache").exists()
    rows = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert [row["task_id"] for row in rows] == ["open-one", "open-two"]
    # provenance as mined: the pulled rows are the mined manifest's rows of those tasks
    mined_rows = [json.loads(line) for line in (mined / "manifest.jsonl").read_text().splitlines()]
    assert rows == [row for row in mined_rows if row["task_id"] in ("open-one", "open-two")]
    assert [row["license"] for row in rows] == ["MIT", "apache-2.0"]  # as the source says
    assert [row["contaminated"] for row in rows] == [None, None]  # never checked
    # the card: metadata the client's own parser accepts, and the tables a reader needs
    from huggingface_hub import DatasetCard

    card = DatasetCard((out / "README.md").read_text())
    assert card.data.license == ["apache-2.0", "mit"]
    assert card.data.configs == [{"config_name": "default", "data_files": "manifest.jsonl"}]
    assert hub.validated == [files["README.md"].decode()]  # the client had the Hub check it
    text = card.text
    for row in ("| repair | verified | 2 |", "| someone/sessions | mit | 1 |",
                "| publish.licence-forbids | 1 |", "| publish.licence-unknown | 1 |",
                "| publish.not-verified | 1 |", "| sessions | anchor.no-repository | 3 |",
                "| oracle | passed | 2 |"):  # fmt: skip
        assert row in text, text
    # pushing the same folder again commits the same files: same bytes, same content
    again = _cli(hub.url, tmp_path, "push", str(mined), "--to", REPO_ID, "--report", str(report))
    assert again.returncode == 0, again.stderr
    assert hub.files(REPO_ID) == files


def test_only_verified_tasks_with_an_open_licence_leave(hub, mined, tmp_path) -> None:
    done = _cli(hub.url, tmp_path, "push", str(mined), "--to", REPO_ID)
    assert done.returncode == 0, done.stderr
    tasks = {name.split("/")[1] for name in hub.files(REPO_ID) if name.startswith("repair/")}
    assert tasks == {"open-one", "open-two"}
    for line in ("publish.not-verified: 1 task(s) held back, e.g. repair/unproven",
                 "publish.licence-unknown: 1 task(s) held back, e.g. repair/no-licence",
                 "publish.licence-forbids: 1 task(s) held back, e.g. repair/reserved"):  # fmt: skip
        assert line in done.stderr, done.stderr
    wider = _cli(hub.url, tmp_path, "push", str(mined), "--to", REPO_ID,
                 "--include-unverified", "--include-unknown-licence")  # fmt: skip
    assert wider.returncode == 0, wider.stderr
    tasks = {name.split("/")[1] for name in hub.files(REPO_ID) if name.startswith("repair/")}
    assert tasks == {"open-one", "open-two", "unproven", "no-licence"}  # never `reserved`


@pytest.mark.parametrize(
    ("token", "code"), [(None, "hub.no-token"), ("", "hub.no-token"), (READ_ONLY, "hub.no-rights")]
)
def test_a_push_without_write_rights_is_one_line(hub, mined, tmp_path, token, code) -> None:
    done = _cli(hub.url, tmp_path, "push", str(mined), "--to", REPO_ID, token=token)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"error: {code}: " in lines[0], done.stderr
    assert REPO_ID not in hub.repos or not hub.files(REPO_ID)


def test_pull_refuses_a_dataset_push_did_not_write(hub, tmp_path) -> None:
    hub.seed("someone/other", {"data/train.jsonl": b"{}\n"}, "f" * 40)
    out = tmp_path / "pulled"
    done = _cli(hub.url, tmp_path, "pull", "someone/other", "--out", str(out))
    assert done.returncode == 2 and "publish.not-a-task-set" in done.stderr, done.stderr
    assert not out.exists() and not hub.downloads


def test_an_offline_push_says_so(hub, mined, tmp_path) -> None:
    done = _cli(hub.url, tmp_path, "push", str(mined), "--to", REPO_ID, HF_HUB_OFFLINE="1")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "hub.offline" in lines[0], done.stderr


def test_an_unreachable_hub_is_one_line(mined, tmp_path) -> None:
    for args in (
        ("push", str(mined), "--to", REPO_ID),
        ("pull", REPO_ID, "--out", str(tmp_path / "o")),
    ):
        done = _cli("http://127.0.0.1:9", tmp_path, *args)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert "hub.unreachable" in lines[0], done.stderr
    assert not (tmp_path / "o").exists()


def test_pull_refuses_a_dataset_that_names_a_file_outside(hub, mined, tmp_path) -> None:
    assert _cli(hub.url, tmp_path, "push", str(mined), "--to", REPO_ID).returncode == 0
    files = hub.repos[REPO_ID][-1][1]
    hub.repos[REPO_ID].append(("e" * 40, files | {"../escape.txt": b"x"}))
    out = tmp_path / "pulled"
    done = _cli(hub.url, tmp_path, "pull", REPO_ID, "--out", str(out))
    assert done.returncode == 2 and "publish.unsafe-path" in done.stderr, done.stderr
    assert not out.exists() and not (tmp_path / "escape.txt").exists()
    assert not list(tmp_path.glob(".pulled.*"))  # the temporary folder is gone too


@pytest.mark.parametrize(
    ("name", "safe"),
    [("repair/a/task.toml", True), ("../x", False), ("/etc/passwd", False), ("a//b", False),
     ("a\\b", False), (".cache/huggingface/x", False), ("a/./b", False), ("", False)],
)  # fmt: skip
def test_safe_names(name: str, safe: bool) -> None:
    assert safe_name(name) is safe


@pytest.mark.parametrize(
    ("licence", "judged"),
    [("MIT", "open"), (" apache-2.0 ", "open"), ("cc-by-sa-4.0", "open"), (None, "unknown"),
     ("other", "unknown"), ("my-own-terms", "unknown"), ("cc-by-nc-nd-4.0", "forbidden"),
     ("proprietary", "forbidden")],
)  # fmt: skip
def test_licence_verdicts(licence: str | None, judged: str) -> None:
    assert verdict(licence) == judged


def test_a_dry_run_uploads_nothing_and_needs_no_token(hub, mined, tmp_path) -> None:
    done = _cli(hub.url, tmp_path, "push", str(mined), "--to", REPO_ID, "--dry-run", token=None)
    assert done.returncode == 0, done.stderr
    assert "would push 2 task(s)" in done.stderr and REPO_ID not in hub.repos


def test_pull_at_a_revision_gets_that_push(hub, mined, tmp_path) -> None:
    assert _cli(hub.url, tmp_path, "push", str(mined), "--to", REPO_ID).returncode == 0
    first = hub.repos[REPO_ID][-1][0]
    wider = _cli(hub.url, tmp_path, "push", str(mined), "--to", REPO_ID, "--include-unverified")
    assert wider.returncode == 0 and hub.repos[REPO_ID][-1][0] != first, wider.stderr
    out = tmp_path / "first"
    done = _cli(hub.url, tmp_path, "pull", REPO_ID, "--out", str(out), "--revision", first)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (out / "repair").iterdir()) == ["open-one", "open-two"]


def test_pull_refuses_a_task_that_does_not_hash_to_its_row(hub, mined, tmp_path) -> None:
    assert _cli(hub.url, tmp_path, "push", str(mined), "--to", REPO_ID).returncode == 0
    files = dict(hub.repos[REPO_ID][-1][1])
    files["repair/open-one/instruction.md"] = b"Do something else.\n"
    hub.repos[REPO_ID].append(("c" * 40, files))
    out = tmp_path / "pulled"
    done = _cli(hub.url, tmp_path, "pull", REPO_ID, "--out", str(out))
    assert done.returncode == 2 and "publish.hash-mismatch" in done.stderr, done.stderr
    assert not out.exists() and not list(tmp_path.glob(".pulled.*"))


def test_the_card_holds_hostile_metadata_in_its_cells(tmp_path) -> None:
    from huggingface_hub import DatasetCard

    from repo2rlenv.publish.card import card_text
    from repo2rlenv.publish.selection import select_tasks

    _task(tmp_path, "odd", licence="My Own | Terms\n---\nlicense: x")
    write_manifest(tmp_path)
    card = DatasetCard(card_text("o/n", select_tasks(tmp_path, include_unknown_licence=True), "1"))
    assert card.data.license == ["other"]  # an id the Hub accepts; the body names the terms
    assert "| someone/sessions | my own \\| terms --- license: x | 1 |" in card.text, card.text


def test_a_task_on_the_offline_base_is_held_back_or_rewritten_in_the_pushed_copy(
    hub, tmp_path
) -> None:
    """Issue 30 point 2: `push` refuses a task whose base exists only on this machine, or
    with `--local-base rewrite` pushes a copy rewritten to the portable recipe; the mined
    folder keeps its bytes, and the pulled copy hashes to its (new) manifest row."""
    from repo2rlenv.publish.portable import BASE_ARG
    from repo2rlenv.settings import OFFLINE_BASE_IMAGE

    root = tmp_path / "mined"
    _task(root, "open-one", licence="mit")
    offline = _task(root, "offline", licence="mit", base=OFFLINE_BASE_IMAGE)
    write_manifest(root)
    before = _tree(root)

    done = _cli(hub.url, tmp_path, "push", str(root), "--to", REPO_ID)
    assert done.returncode == 0, done.stderr
    assert "env.local-only-base: 1 task(s) held back, e.g. repair/offline" in done.stderr
    assert not any(name.startswith("repair/offline/") for name in hub.files(REPO_ID))

    done = _cli(hub.url, tmp_path, "push", str(root), "--to", REPO_ID, "--local-base", "rewrite")
    assert done.returncode == 0, done.stderr
    pushed = hub.files(REPO_ID)["repair/offline/environment/Dockerfile"].decode()
    assert OFFLINE_BASE_IMAGE not in pushed and f"ARG {BASE_ARG}=" in pushed
    assert _tree(root) == before  # the mined folder is as mined
    assert OFFLINE_BASE_IMAGE in (offline / "environment/Dockerfile").read_text()
    out = tmp_path / "pulled"
    pulled = _cli(hub.url, tmp_path, "pull", REPO_ID, "--out", str(out))
    assert pulled.returncode == 0, pulled.stderr  # the rewritten copy hashes to its row
    assert (out / "repair/offline/environment/Dockerfile").read_text() == pushed
    assert "## Portable base" in (out / "README.md").read_text()
    assert _tree(out / "repair/open-one") == _tree(root / "repair/open-one")


def test_the_selection_says_what_it_does_with_a_local_base(tmp_path) -> None:
    """`keep` publishes the bytes as mined; a FROM line the recipe would change the
    meaning of is held back under its own code, not rewritten."""
    from repo2rlenv.publish.selection import HELD_NOT_REWRITABLE, select_tasks
    from repo2rlenv.settings import OFFLINE_BASE_IMAGE

    task = _task(tmp_path, "staged", licence="mit", base=OFFLINE_BASE_IMAGE)
    kept = select_tasks(tmp_path, local_base="keep").chosen
    assert [c.files for c in kept] == [read_task_dir(task).files] and not kept[0].rewritten
    dockerfile = task / "environment/Dockerfile"
    dockerfile.write_text(f"FROM {OFFLINE_BASE_IMAGE} AS base\nFROM base\n")
    held = select_tasks(tmp_path, local_base="rewrite")
    assert not held.chosen and held.held_tasks == {HELD_NOT_REWRITABLE: ["repair/staged"]}
