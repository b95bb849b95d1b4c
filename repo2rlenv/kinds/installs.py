"""Packages the session installed, carried into the task image so its check still runs.

Only installs that succeeded count. A local install (`pip install -e .`, `pip install
path/in/the/workspace`) becomes a `.pth` entry in the image's site-packages that points
at the workspace: it needs no package index, no pip and no build backend (the offline
base image has none), and the verifier, which gets the agent's `/workspace`, imports the
agent's code exactly as the editable install did. Named packages are pinned to the
versions pip reported (`Successfully installed X-1.2`) and installed with pip when the
image is built; such a task needs a package index at build time, which its Dockerfile
records (`LABEL org.rlenv-harvest.build-needs-package-index="true"`).
"""

from __future__ import annotations

import posixpath
import re
import shlex
import tomllib
from dataclasses import dataclass

from repo2rlenv.bundle.standard import WORKDIR
from repo2rlenv.formats.base import ParsedSession, RunCommand

PIP = re.compile(r"(?:^|[;&|(]\s*|\s)(?:\S*/)?(?:python3?(?:\.\d+)?\s+-m\s+)?pip3?\s+install\s")
INSTALLED = re.compile(r"^Successfully installed (.+)$", re.MULTILINE)
SEPARATORS = re.compile(r"&&|\|\||;|\|")
VALUE_FLAGS = {
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "--prefix",
}
SAFE_PATH = re.compile(r"[A-Za-z0-9_./-]+")  # goes into a Dockerfile line unquoted
TOOLING = {"pip"}  # `pip install -U pip`: the installer itself, not a dependency
NEEDS_INDEX_LABEL = 'LABEL org.rlenv-harvest.build-needs-package-index="true"'


def canonical_name(name: str) -> str:
    """PEP 503 normalised name: `Foo_Bar` and `foo-bar` are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Installs:
    local: tuple[str, ...] = ()  # workspace-relative folders installed from the workspace
    pins: tuple[str, ...] = ()  # name==version, as pip reported them

    def __bool__(self) -> bool:
        return bool(self.local or self.pins)


def _pip_words(command: str) -> list[list[str]]:
    """The argument lists of every `pip install` in a (possibly compound) command."""
    found = []
    for part in SEPARATORS.split(command):
        if not PIP.search(" " + part):
            continue
        try:
            words = shlex.split(part)
        except ValueError:
            continue
        at = words.index("install") if "install" in words else len(words)
        found.append(words[at + 1 :])
    return found


def _local_targets(words: list[str], cwd: str) -> list[str]:
    targets, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        if word in VALUE_FLAGS:
            skip = True
            continue
        if word in {"-e", "--editable"} or word.startswith("-"):
            continue
        if word.startswith((".", "/")) or "/" in word.split("[", 1)[0]:
            path = word.split("[", 1)[0]
            targets.append(posixpath.normpath(posixpath.join(cwd or ".", path)))
    return targets


def session_installs(session: ParsedSession) -> Installs:
    root = (session.cwd or "").rstrip("/")
    local: list[str] = []
    pins: dict[str, str] = {}
    for action in session.actions:
        if not isinstance(action, RunCommand) or not PIP.search(" " + action.command):
            continue
        output = action.output or ""
        if action.exit_code not in (0, None) or (
            action.exit_code is None and "Successfully installed" not in output
        ):
            continue
        cwd = action.cwd or ""
        if root and cwd.startswith(root + "/"):
            cwd = cwd[len(root) + 1 :]
        elif cwd == root or cwd.startswith("/"):
            cwd = ""  # the root itself, or outside it: treated as the root
        for words in _pip_words(action.command):
            for target in _local_targets(words, cwd):
                relative = "." if target == root else target.removeprefix(root + "/")
                if relative.startswith(("/", "..")) or not SAFE_PATH.fullmatch(relative):
                    continue
                local.append("" if relative == "." else relative)
        for line in INSTALLED.findall(output):
            for item in line.split():
                name, _, version = item.rpartition("-")
                if name and version and canonical_name(name) not in TOOLING:
                    pins[canonical_name(name)] = version
    return Installs(
        local=tuple(dict.fromkeys(local)), pins=tuple(f"{n}=={v}" for n, v in sorted(pins.items()))
    )


def project_name(folder: str, files: dict[str, str]) -> str | None:
    prefix = f"{folder}/" if folder else ""
    pyproject = files.get(prefix + "pyproject.toml")
    if pyproject:
        try:
            name = tomllib.loads(pyproject).get("project", {}).get("name")
        except tomllib.TOMLDecodeError:
            name = None
        if isinstance(name, str):
            return name
    for config in ("setup.cfg", "setup.py"):
        match = re.search(
            r"""\bname\s*[=:]\s*['"]?([A-Za-z0-9_.-]+)""", files.get(prefix + config, "")
        )
        if match:
            return match.group(1)
    return None


def _import_roots(folder: str, files: dict[str, str]) -> list[str]:
    """Where the installed packages live: `src/` for a src layout, else the folder. When
    the start state does not show the project (it was written later), both: `site`
    skips a `.pth` line whose folder does not exist when Python starts."""
    prefix = f"{folder}/" if folder else ""
    ours = [p for p in files if p.startswith(prefix) and p.endswith(".py")]
    src = posixpath.join(folder, "src")
    if not ours:
        return [src, folder]
    return [src] if any(p.startswith(prefix + "src/") for p in ours) else [folder]


def dockerfile_lines(installs: Installs, files: dict[str, str]) -> tuple[list[str], list[str]]:
    """(lines before the workspace is copied, lines after it)."""
    local_names = {canonical_name(n) for f in installs.local if (n := project_name(f, files))}
    pins = [p for p in installs.pins if canonical_name(p.split("==")[0]) not in local_names]
    before: list[str] = []
    if pins:
        quoted = " ".join(shlex.quote(p) for p in pins)
        before = [
            "# Packages the session installed; building this image needs a package index.",
            NEEDS_INDEX_LABEL,
            f"RUN PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --no-cache-dir {quoted}",
        ]
    after: list[str] = []
    roots = [r for f in installs.local for r in _import_roots(f, files)]
    if roots:
        entries = "\\n".join(posixpath.join(WORKDIR, r).rstrip("/") for r in dict.fromkeys(roots))
        after = [
            "# Workspace projects the session installed (pip install -e/.): a .pth, offline.",
            'RUN python3 -c "import pathlib, site; d = pathlib.Path(site.getsitepackages()[0]); '
            "d.mkdir(parents=True, exist_ok=True); "
            f"(d / 'rlenv-workspace.pth').write_text('{entries}\\n')\"",
        ]
    return before, after
