"""A command's glob is judged by what it could expand to (issue #27, point 4)."""

from __future__ import annotations

import pytest

from train.guard.paths import could_match


@pytest.mark.parametrize(
    ("path", "pattern", "dot_names", "hit"),
    [
        ("/etc/sha*ow", "/etc/shadow", False, True),
        ("/etc/shad?w", "/etc/shadow", False, True),
        ("/etc/[rs]hadow", "/etc/shadow", False, True),
        ("/etc/[!s]hadow", "/etc/shadow", False, False),
        ("/etc/*", "/etc/shadow", False, True),
        ("/*/shadow", "/etc/shadow", False, True),
        ("/e*", "/etc/shadow", False, False),
        ("/etc/passw?", "/etc/shadow", False, False),
        ("/etc/**/shadow", "/etc/shadow", False, True),
        ("/root/.aw?/credentials", "*/.aws/credentials", False, True),
        # bash's `*` never matches a leading dot; find's does
        ("/root/*/credentials", "*/.aws/credentials", False, False),
        ("/root/*/credentials", "*/.aws/credentials", True, True),
        ("/w/*", "*/.env", False, False),
        ("/w/.e*", "*/.env", False, True),
        ("/w/**/*.py", "*/.ssh/id_*", False, False),
        ("/root/**/id_*", "*/.ssh/id_*", True, True),
        ("/root/**", "*/.ssh/id_*", False, True),
        ("/root/**", "/etc/shadow", True, False),
        ("/proc/*/environ", "/proc/*/environ", False, True),
        # a rule's inner `*` stays in one name; its leading `*` and final `/*` do not
        ("/a/.env.d/x", "*/.env.*", False, False),
        ("/a/.env.local", "*/.env.*", False, True),
        ("/r/.config/gcloud/a/b", "*/.config/gcloud/*", False, True),
        ("/proc/1/task/environ", "/proc/*/environ", False, False),
    ],
)
def test_a_glob_hits_a_pattern_when_some_name_matches_both(
    path: str, pattern: str, dot_names: bool, hit: bool
) -> None:
    assert could_match(path, pattern, dot_names) is hit


@pytest.mark.parametrize(
    "command",
    [
        "find . -name '*.py' -exec grep -n TODO {} +",
        "npx tsc --noEmit src/**/*.ts",
        "cat ./*",
        "head -n 5 README",
        "ls /etc | head",
        "git ls-files | xargs wc -l",
        "find src -name '*.py' | xargs grep -l foo",
        "cat /etc/passwd /etc/os-release",
    ],
)
def test_everyday_commands_in_the_workdir_stay_allowed(command: str) -> None:
    from tests.guard.corpus import CONTEXT
    from tests.guard.test_corpus import _call
    from train.guard.checker import Guard

    guard = Guard(None)
    session = guard.register(CONTEXT.model_copy(update={"session_id": "everyday"}))
    decision = guard.check_one(session, {"bash"}, _call("bash", {"command": command}))
    assert decision.allowed, decision.violations
