"""Build a SWE-bench-style instance row from a project's own fix commit.

Why: the SWE-bench dev split (the instances of mini-swe-agent's and SWE-agent's dev runs:
marshmallow, pydicom, pvlib, ...) is published on the Hub only; no public repository the
tools here reach carries it as data. SWE-bench derives each row from the upstream pull
request, and so does this script, from a local mirror (a bare git directory):

- ``base_commit``: the fix commit's first parent;
- ``test_patch`` / ``patch``: the fix commit's diff of test files / of the other files;
- ``FAIL_TO_PASS`` / ``PASS_TO_PASS``: the tests of the test patch's files that fail at the
  base commit with the test patch and pass with the fix too / that pass both times, found
  by running pytest (``-rA``) on a plain copy of the checkout (``PYTHONPATH`` on it);
- ``problem_statement``: the text inside the run's ``<pr_description>`` (what the agent
  was given), else ``--statement-file``.

Run it with the pytest of the task image first on ``--extra-path`` (the offline image
has pytest 7.2.1): pytest versions name parametrised tests differently (pytest 9 calls
astroid's multi-line string parameters ``format_string0`` where 7.2 spells them out), and
the verifier selects tests by these node ids.

The row is written as one JSON line to stdout. This is a measuring tool, not part of the
package: it runs the project's tests, so point it only at repositories you trust.

    python benchmarks/swe_rows_from_history.py --git-dir MIRROR --repo pydicom/pydicom \\
        --instance-id pydicom__pydicom-1694 --fix 8b2a0b8a --run RUN.traj.json
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

TEST_DATA: list[str] = []
"""Extra path prefixes of test files (``--test-data``): mypy's cases live in
``test-data/unit/*.test``, which SWE-bench's split puts in the test patch too."""
EXTRA_PATH: list[str] = []
"""Folders of the test dependencies (``--extra-path``, e.g. a ``pip install --target``)."""
_RESULT = re.compile(r"^(PASSED|FAILED|ERROR) (\S+::.+?)(?: - .*)?$", re.M)
"""``-rA`` summary lines; a parametrised node id may hold spaces (``test_valid[42 ]``)."""


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True
    ).stdout


def _is_test_path(path: str) -> bool:
    """SWE-bench's split: a file under a ``test``/``tests``/``testing`` folder, or named
    ``test_*``/``*_test.py``, belongs to the test patch."""
    parts = path.split("/")
    name = parts[-1]
    if any(path.startswith(prefix) for prefix in TEST_DATA):
        return True
    return (
        any(p in {"test", "tests", "testing"} for p in parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
    )


def _split_diff(git_dir: str, fix: str) -> tuple[str, str, list[str]]:
    names = _git(git_dir, "diff", "--name-only", f"{fix}^1", fix).split()
    tests = [n for n in names if _is_test_path(n)]
    code = [n for n in names if not _is_test_path(n)]
    test_patch = _git(git_dir, "diff", f"{fix}^1", fix, "--", *tests) if tests else ""
    patch = _git(git_dir, "diff", f"{fix}^1", fix, "--", *code) if code else ""
    return patch, test_patch, [t for t in tests if t.endswith(".py")]


def _export(git_dir: str, commit: str, dest: Path) -> None:
    """The commit's files under ``dest``; blobs a partial mirror lacks (large binaries)
    are left out and counted, as the miner's own checkout leaves binaries out."""
    listing = _git(git_dir, "ls-tree", "-r", "-z", commit).split("\0")
    missing = 0
    for entry in filter(None, listing):
        meta, path = entry.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob" or mode == "120000":
            continue
        done = subprocess.run(
            ["git", f"--git-dir={git_dir}", "cat-file", "blob", sha], capture_output=True
        )
        if done.returncode != 0:
            missing += 1
            continue
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(done.stdout)
    if missing:
        print(f"{commit[:12]}: {missing} blobs absent from the mirror", file=sys.stderr)


def _pytest(
    git_dir: str, commit: str, patches: list[str], files: list[str], nodes: list[str] | None = None
) -> dict[str, str]:
    """Status per node id of pytest on `files` (or exactly on `nodes`)."""
    with tempfile.TemporaryDirectory() as tmp:
        _export(git_dir, commit, Path(tmp))
        for patch in patches:
            subprocess.run(["git", "apply", "-"], cwd=tmp, input=patch.encode(), check=True)
        present = (
            nodes
            if nodes is not None
            else [f for f in files if (Path(tmp) / f.split("::")[0]).is_file()]
        )
        if not present:
            raise SystemExit(f"none of {files} is in the checkout: pytest would run everything")
        src = Path(tmp) / "src"
        path = str(src) if src.is_dir() else tmp
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-rA",
                "-q",
                "-p",
                "no:cacheprovider",
                "-o",
                "addopts=",
                *present,
            ],
            cwd=tmp,
            capture_output=True,
            text=True,
            env={"PYTHONPATH": ":".join([path, *EXTRA_PATH]), "PATH": "/usr/bin:/bin"},
            timeout=900,
        )
        out = done.stdout + done.stderr
        if not _RESULT.search(out):
            print(out[-3000:], file=sys.stderr)
    return {node: status for status, node in _RESULT.findall(out)}


def _statement(run: Path) -> str:
    data = json.loads(run.read_text())
    for message in data.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
        if isinstance(content, str) and "<pr_description>" in content:
            body = content.split("<pr_description>", 1)[1].split("</pr_description>", 1)[0]
            body = body.strip()
            prefix = "Consider the following PR description:"
            return body[len(prefix) :].strip() if body.startswith(prefix) else body
    raise SystemExit(f"{run}: no <pr_description> in the run")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--git-dir", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--instance-id", required=True)
    ap.add_argument("--fix", required=True)
    ap.add_argument("--run", type=Path)
    ap.add_argument("--statement-file", type=Path)
    ap.add_argument("--version", default="")
    ap.add_argument("--extra-path", action="append", default=[])
    ap.add_argument("--test-data", action="append", default=[], help="path prefix of test data")
    ap.add_argument(
        "--target",
        action="append",
        default=[],
        help="pytest node id prefix to run instead of the test patch's .py files "
        "(data-driven suites: mypy/test/testcheck.py::TypeCheckSuite::check-foo.test)",
    )
    args = ap.parse_args()
    EXTRA_PATH.extend(args.extra_path)
    TEST_DATA.extend(args.test_data)
    fix = _git(args.git_dir, "rev-parse", args.fix).strip()
    base = _git(args.git_dir, "rev-parse", f"{fix}^1").strip()
    patch, test_patch, files = _split_diff(args.git_dir, fix)
    files = args.target or files
    before = _pytest(args.git_dir, base, [test_patch], files)
    after = _pytest(args.git_dir, base, [test_patch, patch], files)
    f2p = sorted(n for n, s in after.items() if s == "PASSED" and before.get(n) != "PASSED")
    p2p = sorted(n for n, s in after.items() if s == "PASSED" and before.get(n) == "PASSED")
    # The verifier runs these node ids alone, not whole files: a test that passes only
    # after others of its file (shared global state, e.g. pydicom's DS config) is dropped.
    alone = _pytest(args.git_dir, base, [test_patch, patch], files, nodes=[*f2p, *p2p])
    dropped = sorted(n for n in [*f2p, *p2p] if alone.get(n) != "PASSED")
    f2p = [n for n in f2p if n not in dropped]
    p2p = [n for n in p2p if n not in dropped]
    if dropped:
        print(
            f"{len(dropped)} tests pass only with their whole file: {dropped[:5]}", file=sys.stderr
        )
    if args.run:
        statement = _statement(args.run)
    elif args.statement_file:
        statement = args.statement_file.read_text()
    else:
        raise SystemExit("--run or --statement-file is needed for the problem statement")
    created = _git(args.git_dir, "show", "-s", "--format=%cI", fix).strip()
    row = {
        "instance_id": args.instance_id,
        "repo": args.repo,
        "base_commit": base,
        "problem_statement": statement,
        "patch": patch,
        "test_patch": test_patch,
        "FAIL_TO_PASS": json.dumps(f2p),
        "PASS_TO_PASS": json.dumps(p2p),
        "version": args.version,
        "created_at": created,
    }
    print(json.dumps(row, sort_keys=True))
    print(f"{args.instance_id}: F2P {len(f2p)} P2P {len(p2p)}", file=sys.stderr)


if __name__ == "__main__":
    main()
