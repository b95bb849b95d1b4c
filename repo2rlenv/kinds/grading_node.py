"""The verifier of tasks whose tests run under a JavaScript runner (vitest, jest,
node --test), `go test` or `cargo test`: the same contract as pytest's
(`kinds.grading`), in the runner's terms.

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

Go and Rust runners print their report on stdout (`go test -json` events, libtest's
`test NAME ... ok` lines), and run with a fresh build cache each time (`{tmp}` in the
runner's env). Their tests share a package or crate with code the agent wrote, so the
grade counts only the hidden tests by name (`names`): a test the agent added never
counts, and a hidden test that did not report counts as failed. Go's canary joins the
package of the first hidden test (its `package` clause read from that file).
"""

from __future__ import annotations

import json

from repo2rlenv.checkout_secrets import HIDDEN, PROTECTED
from repo2rlenv.kinds.grading import TEST_SH
from repo2rlenv.runners import VerifierSpec
from schemas import BundleFile

PRISTINE_NODE_MODULES = "/opt/rlenv/node_modules"
"""Where the image keeps the dependencies `npm ci` installed, out of the agent's sight."""

GRADE_NODE_PY = r'''"""Verifier written by rlenv-harvest. Settings: /tests/grading.json."""
import json
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
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


def go_json(text):
    """(test, outcome) of every top-level test event of `go test -json`; a package that
    failed with no failing test (it did not build) is one failure."""
    cases, failed_tests, failed_packages = [], set(), []
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict) or event.get("Action") not in ("pass", "fail", "skip"):
            continue
        test, package = event.get("Test"), event.get("Package")
        outcome = {"pass": "passed", "fail": "failed", "skip": "skipped"}[event["Action"]]
        if test and "/" not in test:
            cases.append((test, outcome))
            if outcome == "failed":
                failed_tests.add(package)
        elif not test and outcome == "failed":
            failed_packages.append(package)
    cases += [("<package failed>", "failed") for p in failed_packages if p not in failed_tests]
    return cases


LIBTEST_LINE = re.compile(r"^test (.+?) \.\.\. (ok|FAILED|ignored)\s*$", re.M)


def libtest(text):
    """(test, outcome) of libtest's per-test lines (`test tests::adds ... ok`)."""
    outcome = {"ok": "passed", "FAILED": "failed", "ignored": "skipped"}
    return [(name, outcome[state]) for name, state in LIBTEST_LINE.findall(text)]


def named(cases, names):
    """The outcome of each hidden test by name (a Rust test in a module reports as
    `module::name`); one failing report fails it, no report fails it."""
    outcomes = []
    for name in names:
        found = [o for t, o in cases if t == name or t.endswith("::" + name)]
        outcomes.append("failed" if not found or "failed" in found
                        else "skipped" if "skipped" in found else "passed")
    return outcomes


def place_canary(cwd):
    canary = cwd / SETTINGS["canary_path"]
    canary.parent.mkdir(parents=True, exist_ok=True)
    text = SETTINGS["canary"]
    if SETTINGS["report"] in ("go-json", "libtest"):
        # Go and Rust report on stdout, which code in the tests' package can write to
        # (a Go init() printing `--- PASS:` lines): names drawn now cannot be forged.
        suffix = "_" + secrets.token_hex(6)
        for key in ("canary_pass", "canary_fail"):
            text = text.replace(SETTINGS[key], SETTINGS[key] + suffix)
            SETTINGS[key] += suffix
    if "{package}" in text:  # Go: the package of the first hidden test
        first = cwd / SETTINGS["canary_path"]
        source = (first.parent / SETTINGS["canary_package_of"]).read_text()
        found = re.search(r"^package\s+(\w+)", source, re.M)
        text = text.replace("{package}", found.group(1) if found else "main")
    canary.write_text(text)


READERS = {"jest-json": jest_json, "tap": tap, "go-json": go_json, "libtest": libtest}


def run_tests():
    REPORT.unlink(missing_ok=True)
    cwd = WORKSPACE / SETTINGS["cwd"]
    place_canary(cwd)
    to_file = any("{report}" in a for a in SETTINGS["argv"])
    argv = [a.replace("{report}", str(REPORT)) for a in SETTINGS["argv"]]
    if argv[0] == "node":  # the image's own Node when it brought one, else Debian's
        argv[0] = "/opt/rlenv/bin/node" if Path("/opt/rlenv/bin/node").exists() else "/usr/bin/node"
    command = [*argv, *SETTINGS["targets"], *SETTINGS.get("canary_args", [SETTINGS["canary_path"]])]
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "CI": "true", "NO_COLOR": "1"}
    fresh = tempfile.mkdtemp(prefix="rlenv-run-")
    env.update({k: v.replace("{tmp}", fresh) for k, v in SETTINGS.get("env", {}).items()})
    out = None if to_file else open(REPORT, "w")
    try:
        subprocess.run(command, cwd=cwd, env=env, stdout=out, timeout=SETTINGS["timeout"])
    except subprocess.TimeoutExpired:
        return 0, 0, False
    finally:
        if out is not None:
            out.close()
    try:
        cases = READERS[SETTINGS["report"]](REPORT.read_text())
    except (OSError, ValueError, AttributeError, KeyError):
        return 0, 0, False
    names = {SETTINGS["canary_pass"]: "passed", SETTINGS["canary_fail"]: "failed"}
    seen = {title: outcome for title, outcome in cases if title in names}
    if SETTINGS.get("names"):
        real = named([c for c in cases if c[0] not in names], SETTINGS["names"])
    else:
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
    if spec.report == "go-json":  # beside the first hidden test, in its package
        return (folder + "/" if folder else "") + "rlenv_canary_test.go"
    if spec.report == "libtest":  # an integration test of its own
        return "tests/rlenv_canary.rs"
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
    names: list[str] | None = None,
    first_test: str | None = None,
) -> list[BundleFile]:
    """The verifier's files; `titles`: run and count only the tests of these titles
    (with the canaries), through the runner's name filter. Go and Rust tasks also give
    the hidden tests' `names` (the only tests counted) and `first_test`, the first
    hidden test file relative to `cwd` (Go's canary joins its package; `targets` are
    then packages or `--test` names)."""
    argv = list(spec.argv)
    if titles is not None:
        wanted = [*titles, spec.canary_pass, spec.canary_fail]
        argv += spec.name_filter("(?:" + "|".join(map(js_regex_escape, wanted)) + ")$")
    first = first_test or (targets[0] if targets else "test.test.js")
    settings: dict[str, object] = {
        "runner": runner,
        "argv": argv,
        "report": spec.report,
        "config_pattern": spec.config_pattern,
        "canary": spec.canary,
        "canary_path": canary_path(first, spec),
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
    if spec.env:
        settings["env"] = dict(spec.env)
    if names is not None:
        settings["names"] = names
    if spec.report == "go-json":
        settings["canary_package_of"] = first.rpartition("/")[2]
        settings["canary_args"] = []
    elif spec.report == "libtest":
        settings["canary_args"] = ["--test", "rlenv_canary"]
    files = [
        BundleFile(path="tests/test.sh", content=TEST_SH.encode(), executable=True),
        BundleFile(path="tests/grade.py", content=GRADE_NODE_PY.encode()),
        BundleFile(
            path="tests/grading.json",
            content=(json.dumps(settings, indent=2, sort_keys=True) + "\n").encode(),
        ),
    ]
    for rel, text in sorted(protected.items()):
        files.append(BundleFile(path=PROTECTED + rel, content=text.encode()))
    for rel, text in sorted(hidden.items()):
        files.append(BundleFile(path=HIDDEN + rel, content=text.encode()))
    return files
