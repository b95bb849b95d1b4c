"""Forgery probes for tasks whose verifier runs `go test` or `cargo test`: a fake
toolchain on PATH, and hidden tests turned into skips beside a planted test that passes
under their names.

Not a probe: Go package code whose init() prints `--- PASS:` lines and exits. On a build
task's start state the package does not compile (the code is missing), so such a probe
scores 0 whatever the verifier does; the verifier's per-run canary names are its defence
(tests/runners/test_native_grader.py).

Each knows more than an agent would: it reads the hidden tests' names and the canaries'
names from `tests/grading.json`, so a verifier that trusted stdout lines, its PATH, or
tests it did not write would be scored by them. The verifier (`kinds.grading_node`)
must still score 0 without the reference solution.
"""

from __future__ import annotations

import json
import re

from repo2rlenv.bundle import TaskTree
from repo2rlenv.runtime import TrialRequest
from repo2rlenv.validate.probes_js import runner_name, settings

NATIVE_RUNNERS = frozenset({"go-test", "cargo-test"})
GO_FUNC = re.compile(rb"(func Test\w*\(\s*(\w+)\s+\*testing\.T\s*\)\s*\{)")


def applies(tree: TaskTree) -> bool:
    return runner_name(tree) in NATIVE_RUNNERS


def _names(tree: TaskTree) -> tuple[list[str], str, str]:
    found = settings(tree)
    names = [str(n) for n in found.get("names") or []]
    return names, str(found.get("canary_pass", "")), str(found.get("canary_fail", ""))


def _folder(tree: TaskTree) -> str:
    root = (tree.config.environment.workdir if tree.config else None) or "/workspace"
    cwd = str(settings(tree).get("cwd") or "")
    return f"{root}/{cwd}".rstrip("/")


def forged_output(tree: TaskTree) -> tuple[str, str]:
    """Passing output in both formats: `go test -json` events and libtest lines, the
    canaries as they would be if the verifier used their static names."""
    names, good, bad = _names(tree)
    outcomes = [(n, "pass") for n in [*names, good]] + [(bad, "fail")]
    go = "\n".join(json.dumps({"Action": a, "Package": "forged", "Test": n}) for n, a in outcomes)
    rust = "\n".join(f"test {n} ... {'ok' if a == 'pass' else 'FAILED'}" for n, a in outcomes)
    return go, rust


def fake_toolchain(tree: TaskTree, label: str) -> TrialRequest:
    go, rust = forged_output(tree)
    script = (
        "#!/bin/sh\ncase \"$0\" in *go) cat <<'EOF'\n" + go + "\nEOF\n;; *) cat <<'EOF'\n"
        + rust + "\nEOF\n;; esac\nexit 0\n"
    ).encode()  # fmt: skip
    plants = {f"/usr/local/bin/{tool}": script for tool in ("go", "cargo")}
    plants.update({f"{_folder(tree)}/bin/{tool}": script for tool in ("go", "cargo")})
    paths = " ".join(plants)
    return TrialRequest(label=label, plant_files=plants, agent_commands=[f"chmod +x {paths}"])


def skipped_tests(tree: TaskTree, label: str) -> TrialRequest:
    """The hidden tests planted with every test skipped (`t.Skip()`, `#[ignore]`), and a
    test of the agent's own that passes under the hidden tests' names."""
    root = (tree.config.environment.workdir if tree.config else None) or "/workspace"
    names, _good, _bad = _names(tree)
    plants: dict[str, bytes] = {}
    go = runner_name(tree) == "go-test"
    for path, (content, _x) in tree.files.items():
        if not path.startswith("tests/hidden/"):
            continue
        rel = path.removeprefix("tests/hidden/")
        if go:
            plants[f"{root}/{rel}"] = GO_FUNC.sub(rb"\1 \2.Skip()", content)
        else:
            plants[f"{root}/{rel}"] = content.replace(b"#[test]", b"#[test]\n#[ignore]")
    if go:  # a package of its own: the hidden tests' names would clash in theirs
        forged = "".join(f"func {n}(t *testing.T) {{}}\n" for n in names)
        plants[f"{_folder(tree)}/rlenv_forged/forged_test.go"] = (
            'package rlenv_forged\n\nimport "testing"\n\n' + forged
        ).encode()
    else:
        forged = "".join(f"#[test]\nfn {n}() {{}}\n" for n in names)
        plants[f"{_folder(tree)}/tests/rlenv_forged.rs"] = forged.encode()
    return TrialRequest(label=label, plant_files=plants)
