"""The verifier of tasks whose tests run under a JavaScript runner (vitest, jest,
node --test): the same contract as pytest's (`kinds.grading`), in the runner's terms.

`tests/grade.py` (Python standard library; the offline base has python3) puts back the
protected copies of the tests, package.json and the runner's config, deletes any other
config of the runner the agent added (a `vitest.config.ts` that includes nothing, a
`jest.config.js` that ignores every path), replaces `node_modules` with the pristine
copy the image made at build time (a fake `vitest` in `node_modules/.bin` or a patched
runner goes with it), copies in the hidden tests, and runs the project's runner with
`node` from /usr/bin under a clean environment (`CI=true`: vitest then fails on a
`.only`). It reads the runner's own machine-readable report, never its exit status. An extend
task whose new tests were appended to an existing test file runs with the runner's name
filter (`-t`, `--test-name-pattern`) and counts only the tests titled as the new ones
(`titles`): the old tests of that file are start state, not the task.
A canary test file in the runner's own language sits beside the first target: its
must-fail test passing, or either canary missing, scores 0.
"""

from __future__ import annotations

import json

from repo2rlenv.kinds.grading import TEST_SH
from repo2rlenv.runners import VerifierSpec
from schemas import BundleFile

PRISTINE_NODE_MODULES = "/opt/rlenv/node_modules"
"""Where the image keeps the dependencies `npm ci` installed, out of the agent's sight."""

GRADE_NODE_PY = r'''"""Verifier written by rlenv-harvest. Settings: /tests/grading.json."""
import json
import re
import shutil
import socket
import subprocess
from pathlib import Path

SETTINGS = json.loads(Path("/tests/grading.json").read_text())
WORKSPACE = Path("/workspace")
REWARD = Path("/logs/verifier/reward.txt")
REPORT = Path("/logs/verifier/report.out")
PRISTINE = Path(SETTINGS["node_modules"])


def reset_workspace_controls():
    protected = set(SETTINGS["protected"])
    config = re.compile(SETTINGS["config_pattern"])
    cwd = WORKSPACE / SETTINGS["cwd"]
    modules = cwd / "node_modules"
    if modules.is_symlink() or modules.is_file():
        modules.unlink()
    elif modules.exists():
        shutil.rmtree(modules)
    for path in list(WORKSPACE.rglob("*")):
        rel = path.relative_to(WORKSPACE).as_posix()
        if "node_modules/" in rel + "/" or rel in protected:
            continue
        if config.search(rel) and (path.is_file() or path.is_symlink()):
            path.unlink()
    if PRISTINE.is_dir():
        shutil.copytree(PRISTINE, modules, symlinks=True)
    for folder, names in (("protected", SETTINGS["protected"]), ("hidden", SETTINGS["hidden"])):
        for rel in names:
            target = WORKSPACE / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or target.is_file():
                target.unlink()
            elif target.is_dir():
                shutil.rmtree(target)
            shutil.copyfile(Path("/tests") / folder / rel, target)


def name_localhost():
    """Vite (under vitest) looks up `localhost`; a container started without a network
    has no /etc/hosts entry for it, and the lookup fails the whole run."""
    try:
        socket.getaddrinfo("localhost", None)
    except OSError:
        with open("/etc/hosts", "a") as hosts:
            hosts.write("127.0.0.1 localhost\n::1 localhost\n")


def jest_json(text):
    """(title, outcome) of every test in jest's (and vitest's) JSON report."""
    cases = []
    for result in json.loads(text).get("testResults", []):
        for case in result.get("assertionResults", []):
            status = case.get("status")
            cases.append((case.get("title") or "", "passed" if status == "passed"
                          else "failed" if status == "failed" else "skipped"))
        if not result.get("assertionResults") and result.get("status") == "failed":
            cases.append(("<suite failed to run>", "failed"))
    return cases


TAP_POINT = re.compile(r"^(\s*)(not ok|ok) \d+ - (.*?)(?:\s+#\s*(SKIP|TODO)\b.*)?$")


def tap(text):
    """Leaf test points of node --test's TAP: a point is a parent (a file, a describe)
    when the point just before it is indented deeper."""
    points = [m for m in map(TAP_POINT.match, text.splitlines()) if m]
    cases = []
    for i, point in enumerate(points):
        if i and len(points[i - 1].group(1)) > len(point.group(1)):
            continue
        outcome = "skipped" if point.group(4) else (
            "passed" if point.group(2) == "ok" else "failed")
        cases.append((point.group(3).strip(), outcome))
    return cases


def run_tests():
    REPORT.unlink(missing_ok=True)
    cwd = WORKSPACE / SETTINGS["cwd"]
    canary = cwd / SETTINGS["canary_path"]
    canary.parent.mkdir(parents=True, exist_ok=True)
    canary.write_text(SETTINGS["canary"])
    argv = [a.replace("{report}", str(REPORT)) for a in SETTINGS["argv"]]
    if argv[0] == "node":  # the image's own Node when it brought one, else Debian's
        argv[0] = "/opt/rlenv/bin/node" if Path("/opt/rlenv/bin/node").exists() else "/usr/bin/node"
    command = [*argv, *SETTINGS["targets"], SETTINGS["canary_path"]]
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "CI": "true", "NO_COLOR": "1"}
    try:
        subprocess.run(command, cwd=cwd, env=env, timeout=SETTINGS["timeout"])
    except subprocess.TimeoutExpired:
        return 0, 0, False
    try:
        text = REPORT.read_text()
        cases = jest_json(text) if SETTINGS["report"] == "jest-json" else tap(text)
    except (OSError, ValueError, AttributeError):
        return 0, 0, False
    names = {SETTINGS["canary_pass"]: "passed", SETTINGS["canary_fail"]: "failed"}
    seen = {title: outcome for title, outcome in cases if title in names}
    real = [outcome for title, outcome in cases if title not in names]
    if SETTINGS.get("titles") is not None:
        wanted = set(SETTINGS["titles"])
        real = [outcome for title, outcome in cases if title in wanted]
    return len(real), real.count("passed"), seen == names


def main():
    REWARD.parent.mkdir(parents=True, exist_ok=True)
    REWARD.write_text("0\n")
    reset_workspace_controls()
    name_localhost()
    total, passed, intact = run_tests()
    expected = max(SETTINGS["expected"], 1)
    if not intact:
        reward = 0.0
    elif SETTINGS["mode"] == "all":
        reward = 1.0 if total >= expected and passed == total else 0.0
    else:
        reward = round(passed / max(expected, total), 6)
    print(f"tests: {total} run, {passed} passed, expected {SETTINGS['expected']}, "
          f"canaries {'intact' if intact else 'FORGED OR MISSING'}")
    REWARD.write_text(f"{reward}\n")


if __name__ == "__main__":
    main()
'''


JS_REGEX_SPECIAL = set("\\^$.|?*+()[]{}/")


def js_regex_escape(text: str) -> str:
    """`text` as a literal in a JavaScript regular expression, escaping only syntax
    characters (an identity escape such as `\\ ` is an error under the `u` flag)."""
    return "".join("\\" + c if c in JS_REGEX_SPECIAL else c for c in text)


def canary_path(first_target: str, spec: VerifierSpec) -> str:
    """Beside the first target, named like it (`src/a.test.ts` -> `src/rlenv_canary.test.ts`),
    so the runner's include patterns and transforms take it as they take the target; the
    node --test canary is always CommonJS (`.cjs`)."""
    folder, _, name = first_target.rpartition("/")
    if spec.report == "tap":
        suffix = ".test.cjs"
    else:
        parts = name.split(".")
        suffix = "." + ".".join(parts[-2:]) if len(parts) >= 3 else ".test.js"
    return (folder + "/" if folder else "") + "rlenv_canary" + suffix


def node_grading_files(
    *,
    runner: str,
    spec: VerifierSpec,
    mode: str,
    cwd: str,
    targets: list[str],
    expected: int,
    protected: dict[str, str],
    hidden: dict[str, str],
    timeout: int = 600,
    titles: list[str] | None = None,
) -> list[BundleFile]:
    """The verifier's files; `titles`: run and count only the tests of these titles
    (with the canaries), through the runner's name filter."""
    argv = list(spec.argv)
    if titles is not None:
        wanted = [*titles, spec.canary_pass, spec.canary_fail]
        argv += spec.name_filter("(?:" + "|".join(map(js_regex_escape, wanted)) + ")$")
    settings = {
        "runner": runner,
        "argv": argv,
        "report": spec.report,
        "config_pattern": spec.config_pattern,
        "canary": spec.canary,
        "canary_path": canary_path(targets[0] if targets else "test.test.js", spec),
        "canary_pass": spec.canary_pass,
        "canary_fail": spec.canary_fail,
        "node_modules": PRISTINE_NODE_MODULES,
        "mode": mode,
        "cwd": cwd,
        "targets": targets,
        "expected": expected,
        "protected": sorted(protected),
        "hidden": sorted(hidden),
        "timeout": timeout,
        "titles": titles,
    }
    files = [
        BundleFile(path="tests/test.sh", content=TEST_SH.encode(), executable=True),
        BundleFile(path="tests/grade.py", content=GRADE_NODE_PY.encode()),
        BundleFile(
            path="tests/grading.json",
            content=(json.dumps(settings, indent=2, sort_keys=True) + "\n").encode(),
        ),
    ]
    for rel, text in sorted(protected.items()):
        files.append(BundleFile(path=f"tests/protected/{rel}", content=text.encode()))
    for rel, text in sorted(hidden.items()):
        files.append(BundleFile(path=f"tests/hidden/{rel}", content=text.encode()))
    return files
