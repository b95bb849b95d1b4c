"""No tracked file names a path of one particular machine.

A path like `<dev root>/shared/...`, `/home/<user>/...` or a generated temporary folder
works on the machine it was written on and nowhere else: as a test default it skips or
fails elsewhere, in docs it points readers at a folder they do not have. This test
reads every tracked text file (`git ls-files`; code, tests, docs, Makefile, CI) except
the fixtures under tests/data, and fails on:

- the folder this checkout lies in, whatever machine runs the test, and the folder
  `/work` (with anything under it), where this project is developed (its mirrors and
  samples live there);
- temporary folders named by a generator (`pytest-of-*`, `tmpXXXXXXXX` of mkdtemp);
- home directories (`/home/<name>`, `/Users/<name>`, `C:\\Users\\<name>`, and
  `/root/<name>`) unless the name is a placeholder (`<name>`, `...`) or in the
  allowlists below. Those are recognised by the path itself, not by the file it is
  in: the test inputs of path handling (privacy, replay, the guard's rules) use a
  small cast of placeholder users, and a path of anyone else's, anywhere, fails.

The patterns are spelled with a character class (`[o]`) so this file does not match
itself.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PLACEHOLDER_USERS: dict[str, str] = {
    "dev": "the example sessions' and test factories' user (repo2rlenv/examples, tests)",
    "x": "the one-letter user of privacy and replay docs and tests",
    "alice": "tests of home-path rewriting (tests/mining/test_privacy.py)",
    "bob": "tests of home-path rewriting",
    "carol": "tests of home-path rewriting",
    "Bob.Smith": "a user name with a dot, in the semantic rules' tests",
    "ana": "compaction replay tests (tests/formats)",
    "maria": "Windows and macOS session tests (tests/formats, tests/mining)",
    "jdoe": "personal-path semantic rule tests",
    "person{i}x": "a generated user name in the privacy test of many names",
    "22967": "a numeric Windows user of a published session, in the privacy tests",
    "erik": "the user of a published session excerpt in the guard's real-session tests",
    "user": "the generic account name the privacy pass keeps",
    "runner": "the CI runner account the personal-path rule keeps",
    "Shared": "macOS's shared folder, not a person",
    "alicesmith": "the notebook privacy tests' user (tests/smoldata/test_gate.py)",
    "bobjones": "the notebook privacy tests' Windows user (tests/smoldata/test_gate.py)",
}
"""Home-directory names that are test personas or placeholders, never a real machine's."""

CONTAINER_ROOT_FILES: dict[str, str] = {
    ".ssh": "a secret path inside the agent's container, which the guard blocks",
    ".netrc": "a secret path inside the agent's container, which the guard blocks",
    ".bashrc": "a shell start file inside the agent's container (guard corpus)",
    ".cache": "a container's cache folder, in the privacy pass's tests of `/root`",
    "outside-marker": "the marker a Harbor sandbox test plants outside the workspace",
}
"""Names under `/root/` that are paths inside a task or agent container, not a host's."""

_PLACEHOLDER = re.compile(r"<\w+>|\.\.\.|.*[*?\[].*")
"""A name written as a placeholder (`<user>`), elided (`...`) in docs, or a glob pattern
(`/root/*`, `/root/.aw?`: the guard's tests judge what such patterns could expand to
inside the agent's container, never a path of this machine)."""
_EDGE = r"(?<![\w.~/-])"
_DEV_ROOT = re.compile(_EDGE + r"/w[o]rk/")
_GENERATED_TMP = re.compile(_EDGE + r"/t[m]p/(?:pytest-of-|tmp[a-z0-9_]{8}\b)")
_HOME = re.compile(
    _EDGE
    + r"(?:/h[o]me/|/U[s]ers/|[A-Za-z]:(?:\\{1,2}|/)U[s]ers(?:\\{1,2}|/))"
    + r"(?P<name>[^/\\\s'\"`]+)"
)
_ROOT_HOME = re.compile(_EDGE + r"/r[o]ot/(?P<name>[^/\\\s'\"`]+)")  # `\n` in source ends it


def _checkout_pattern(parent: Path = REPO.parent) -> re.Pattern[str] | None:
    """The folder holding this checkout (a runner's workspace, a developer's home), as
    the start of a path below it."""
    if parent == Path(parent.anchor):
        return None
    return re.compile(_EDGE + re.escape(str(parent)) + r"(?:/|\\)(?=[\w.])")


def local_paths(text: str, checkout: re.Pattern[str] | None = None) -> list[str]:
    """The machine-local paths in `text` (see the module)."""
    found = [m.group() for p in (_DEV_ROOT, _GENERATED_TMP) for m in p.finditer(text)]
    if checkout is not None:
        found += [m.group() for m in checkout.finditer(text)]
    for pattern, allowed in ((_HOME, PLACEHOLDER_USERS), (_ROOT_HOME, CONTAINER_ROOT_FILES)):
        found += [
            m.group()
            for m in pattern.finditer(text)
            if m.group("name") not in allowed and not _PLACEHOLDER.fullmatch(m.group("name"))
        ]
    return found


def _tracked() -> list[str]:
    try:
        done = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                              check=True, timeout=60)  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"not a git checkout, or git is missing ({exc}): nothing to list")
    return [p for p in done.stdout.decode().split("\0") if p]


def test_no_tracked_file_names_a_machine_local_path() -> None:
    checkout = _checkout_pattern()
    problems = []
    for rel in _tracked():
        if rel.startswith("tests/data/"):
            continue
        path = REPO / rel
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary, or deleted in the work tree
        for number, line in enumerate(text.splitlines(), 1):
            problems += [f"{rel}:{number}: {hit}" for hit in local_paths(line, checkout)]
    assert not problems, "machine-local paths:\n" + "\n".join(problems)


def test_the_check_tells_a_local_path_from_a_placeholder_or_container_path() -> None:
    home, users, root, tmp = "/h" + "ome/", "/U" + "sers/", "/r" + "oot/", "/t" + "mp/"
    local = [
        "/w" + "ork/.mirror/pydicom",
        home + "jsmith/src/x.py",
        users + "kim/proj",
        "C:\\" + "Users\\kim\\proj",
        root + "projects/run.log",
        tmp + "pytest-of-root/pytest-3/x",
        tmp + "tmpa1b2c3d4/file",
    ]
    for text in local:
        assert local_paths(f"see {text} here"), text
    fine = [
        "/workspace/tests",
        home + "alice/calc",
        "C:\\" + "Users\\<user>\\cap",
        root + ".ssh/id_rsa",
        tmp + "rlenv-wheels/a.whl",  # inside the task image
        "~/.cache/rlenv-harvest",
        "../shared/samples/real",
    ]
    for text in fine:
        assert local_paths(f"see {text} here") == [], text
    checkout = _checkout_pattern(Path("/srv/ci/build"))
    assert local_paths("cd /srv/ci/build/repo", checkout) == ["/srv/ci/build/"]
    # a folder of the same name inside another path, or the bare name, is not the checkout
    assert local_paths("cd /home/alice/srv/ci/build/repo", checkout) == []
    assert local_paths('cwd = "/srv/ci/build"', checkout) == []
