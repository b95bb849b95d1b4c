"""The version setuptools-scm would give a checkout, from `git describe` of its commit.

A task's workspace has no `.git` (no history reaches the agent), so a project versioned
by setuptools-scm is given a pretend version in the image build
(`SETUPTOOLS_SCM_PRETEND_VERSION`). SWE-bench installs from a git clone, where
setuptools-scm derives the version from the nearest tag: `3.6.3.dev417+g<hash>` for a
matplotlib 3.6 commit, not the spec's `3.6`. The difference is seen by tests:
matplotlib-24637's `test_svg_default_metadata` asserts that `mpl.__version__` is absent
from an SVG, and `3.6` occurs in its coordinates. So the version is derived, on the
host, from git data only (`git describe --tags --long` of the anchored commit, read by
the anchor's repository cache: no code of the repository runs), with setuptools-scm's
default scheme (`guess-next-dev`, local part `+g<node>`). Where no tag is reachable
(a mirror without tags, a shallow fetch) the spec's version is used as before, and
the reason is recorded with a stable code.
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict

NO_TAG = "scm.no-tag"
"""`git describe` found no tag reachable from the commit (or could not run)."""
NO_REPOSITORY = "scm.no-repository"
"""No repository holding the commit could be read (an unanchored run, a bad commit)."""
UNPARSED = "scm.describe-unparsed"
"""The nearest tag is not a version setuptools-scm would read (`latest`, `nightly`)."""

DESCRIBE = re.compile(r"(?P<tag>.+)-(?P<distance>[0-9]+)-g(?P<node>[0-9a-f]{4,40})")
"""`git describe --tags --long`: `<tag>-<commits since it>-g<abbreviated id>`."""
TAG_VERSION = re.compile(r"^(?:[\w-]+-)?(?P<version>[vV]?[0-9]+(?:\.[0-9]+){0,2}[^+]*)(?:\+.*)?$")
"""setuptools-scm's default tag pattern: an optional `name-` prefix, an optional `v`."""
LAST_NUMBER = re.compile(r"([0-9]+)(?!.*[0-9])")


class ScmVersion(BaseModel):
    """What the describe gave: a version, or why none (then the spec's is used)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str | None = None
    describe: str = ""
    reason: str = ""
    """A stable code (`NO_TAG`, `NO_REPOSITORY`, `UNPARSED`) when `version` is None."""
    detail: str = ""


def next_version(tag: str) -> str:
    """setuptools-scm's `guess_next_version`: a dev release's base (`3.6.0.dev0` ->
    `3.6.0`), else the tag with its last number raised (`3.6.2` -> `3.6.3`, `3.6.0rc1`
    -> `3.6.0rc2`)."""
    base = tag.split("+", 1)[0]
    if ".dev" in base:
        return base.split(".dev", 1)[0]
    return LAST_NUMBER.sub(lambda m: str(int(m.group(1)) + 1), base, count=1)


def from_describe(describe: str) -> ScmVersion:
    """The version of a `git describe --tags --long` line, as setuptools-scm's default
    scheme forms it: the tag's own version on the tag, else `<next>.dev<distance>+g<node>`."""
    text = describe.strip()
    found = DESCRIBE.fullmatch(text)
    tag = TAG_VERSION.match(found.group("tag")) if found else None
    if found is None or tag is None:
        return ScmVersion(describe=text[:200], reason=UNPARSED, detail=text[:200])
    try:
        version = Version(tag.group("version"))
    except InvalidVersion:
        return ScmVersion(describe=text[:200], reason=UNPARSED, detail=text[:200])
    distance = int(found.group("distance"))
    if distance == 0:
        return ScmVersion(version=str(version), describe=text)
    dev = f"{next_version(str(version))}.dev{distance}+g{found.group('node')}"
    return ScmVersion(version=str(Version(dev)), describe=text)


def pretend_version(spec_version: str, scm: ScmVersion | None) -> tuple[str, str]:
    """The pretend version for the build, and the provenance line saying where it came
    from: the describe's, else the spec's (`0.0` when that is no version either)."""
    if scm is not None and scm.version:
        line = f"setuptools-scm version: {scm.version} (git describe: {scm.describe})\n"
        return scm.version, line
    try:
        fallback = str(Version(spec_version))
    except InvalidVersion:
        fallback = "0.0"
    why = f"{scm.reason}: {scm.detail}" if scm is not None else "not asked"
    return fallback, f"setuptools-scm version: {fallback} (the spec's; {why})\n"
