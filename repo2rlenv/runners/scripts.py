"""Package managers in front of a runner: `npx vitest`, `pnpm exec jest`, `yarn vitest`,
and `npm test` / `npm run test:unit` / `pnpm test` / `yarn test`, resolved through the
`scripts` of the `package.json` replay knows at that moment.

A script's text is read with the project's shell analyser (`repo2rlenv.shell`), never
with patterns over raw text; a script that calls another script is followed a few
levels deep. Arguments given after the script name (`npm test -- a.test.ts`) are
appended to every command the script runs, as the package manager does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from repo2rlenv.runners.base import program
from repo2rlenv.shell import command_effects

MANAGERS = {"npm", "pnpm", "yarn", "bun"}
RUNNERS_OF_BINARIES = {"npx", "pnpx", "bunx"}
MAX_DEPTH = 3
"""`test` -> `test:unit` -> `vitest run`: three levels cover what projects write."""
TEST_ALIASES = {"test", "t", "tst"}
MANAGER_BUILTINS = {
    "install",
    "i",
    "ci",
    "add",
    "remove",
    "uninstall",
    "update",
    "init",
    "create",
    "publish",
    "pack",
    "link",
    "audit",
    "outdated",
    "list",
    "ls",
    "why",
    "config",
    "login",
    "version",
    "view",
    "info",
    "cache",
    "dlx",
    "start",
    "build",
    "dev",
    "lint",
    "format",
    "--version",
    "-v",
}


ECHOED = re.compile(r"^> \S+@\S* (?P<name>\S+)\r?\n> (?P<script>[^\n]+)$", re.M)
"""npm and pnpm print the script they run: `> pkg@1.0.0 test` then `> vitest run`."""


def echoed_script(output: str | None, name: str) -> str | None:
    """The script `name` as the package manager printed it before running it, for a
    session whose package.json replay never saw in full."""
    for found in ECHOED.finditer((output or "")[:8192]):
        if found.group("name") == name:
            return found.group("script").strip()
    return None


def scripts_of(package_json: str | None) -> dict[str, str]:
    """`scripts` of a package.json text (empty when it is absent or not JSON)."""
    try:
        data = json.loads(package_json or "")
    except ValueError:
        return {}
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if not isinstance(scripts, dict):
        return {}
    return {k: v for k, v in scripts.items() if isinstance(k, str) and isinstance(v, str)}


def expand(
    words: list[str],
    package_json: Callable[[], str | None] | None,
    depth: int = 0,
    output: str | None = None,
) -> list[tuple[list[str], str | None]]:
    """Every simple command `words` runs, package managers unwrapped, with the script
    name it came from (None when run directly). A script missing from the known
    package.json is read from the package manager's echo in `output`."""
    if not words or depth > MAX_DEPTH:
        return []
    head = program(words[0])
    rest = words[1:]
    if head in RUNNERS_OF_BINARIES:
        rest = [w for w in rest if w not in {"--yes", "-y", "--no-install", "--no"}]
        return [(rest, None)] if rest else []
    if head not in MANAGERS:
        return [(words, None)]
    if not rest:
        return []
    verb = rest[0]
    if verb in {"exec", "x"} and len(rest) > 1:
        inner = rest[1:]
        return [(inner[1:] if inner[0] == "--" else inner, None)]
    if verb in TEST_ALIASES:
        name, extra = "test", rest[1:]
    elif verb in {"run", "run-script", "rum", "urn"} and len(rest) > 1:
        name, extra = rest[1], rest[2:]
    elif head in {"pnpm", "yarn"} and verb not in MANAGER_BUILTINS:
        name, extra = verb, rest[1:]  # `yarn vitest`: a script of that name, else a binary
    else:
        return []
    if head == "bun" and verb in TEST_ALIASES:
        return []  # `bun test` is Bun's own runner, not a script
    extra = extra[1:] if extra[:1] == ["--"] else extra
    script = scripts_of(package_json() if package_json else None).get(name)
    if script is None and depth == 0:
        script = echoed_script(output, name)
    if script is None:
        return [([name, *extra], None)] if verb not in TEST_ALIASES | {"run", "run-script"} else []
    found: list[tuple[list[str], str | None]] = []
    for inner in command_effects(script).words:
        for expanded, _ in expand([*inner, *extra], package_json, depth + 1):
            found.append((expanded, name))
    return found
