"""Test requirements a checkout lists in its requirements files, read, never installed
as written.

Many projects declare what their tests import only in a requirements file, not in their
packaging metadata: moto's tests import `sure`, listed (as the `surer` fork) in
`requirements-tests.txt` alone, so an image built from `setup.cfg` lacked it and every
test failed at import. The files are read from the checkout (never a URL, never outside
it); only plain requirement lines are kept, each parsed with `packaging`:

- files: the test-named ones (`requirements-tests.txt`, `test-requirements.txt`,
  `requirements/test*.txt`, ...); only when the checkout has none, the dev-named ones
  (`requirements-dev.txt`, ...), which usually include the tests' requirements and also
  add linters;
- `-r FILE` / `--requirement FILE` is followed when FILE lies inside the checkout;
- everything else is skipped with a reason code and kept in `skipped`: `-e` / editable
  installs (`-e .[all]` is the checkout itself, on the path already), URLs and direct
  references, local paths and archives, options (`-c`, `--index-url`, `--hash`, ...),
  lines `packaging` cannot parse, lines whose environment marker does not hold for
  the image's Python (the host's, the same 3.11), and the CI's coverage-upload tools
  (`COVERAGE_UPLOADERS`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatch

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from repo2rlenv.kinds.instance_deps import PROVENANCE, DependencyError
from repo2rlenv.kinds.verifier_pytest import verifier_pytest

TEST_FILES = (
    "requirements-tests.txt",
    "requirements-test.txt",
    "requirements_tests.txt",
    "requirements_test.txt",
    "test-requirements.txt",
    "test_requirements.txt",
    "tests-requirements.txt",
    "tests_requirements.txt",
    "requirements/test*.txt",
    "requirements/tests*.txt",
)
"""Where projects list their tests' requirements (patterns, relative to the root)."""
DEV_FILES = (
    "requirements-dev.txt",
    "requirements_dev.txt",
    "dev-requirements.txt",
    "dev_requirements.txt",
    "requirements/dev*.txt",
)
"""Read only when no test file exists: they hold the tests' requirements and tools."""
INCLUDE = re.compile(r"^(?:-r|--requirement)(?:\s*=\s*|\s+)(?P<path>\S+)$")
ARCHIVE = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar")
MAX_DEPTH = 8
COVERAGE_UPLOADERS = frozenset({"codecov", "coveralls", "python-coveralls"})
"""Tools that upload a coverage report to a hosted service from CI: no test imports
them, and the index may no longer serve them (`codecov`, in matplotlib 3.0's and
3.1's `requirements/testing/travis_all.txt`, has no release there: pip stopped the
image build with "No matching distribution found for codecov", matplotlib-13989).
Left out as `requirements.coverage-upload`, listed in `wheels.txt`."""
"""Includes nested deeper than this are refused (a cycle is caught earlier anyway)."""


@dataclass(frozen=True)
class SkippedLine:
    """A line that is not installed, and why (`requirements.<reason>`)."""

    path: str
    line: int
    reason: str
    text: str


@dataclass
class RequirementFiles:
    requirements: list[str] = field(default_factory=list)
    """Requirement strings in file order, markers evaluated and dropped, no duplicates."""
    files: list[str] = field(default_factory=list)
    """The checkout files read, in reading order."""
    skipped: list[SkippedLine] = field(default_factory=list)


def requirement_files(files: dict[str, str]) -> list[str]:
    """The checkout's test requirements files (sorted), else its dev ones."""
    for patterns in (TEST_FILES, DEV_FILES):
        found = sorted(p for p in files if any(fnmatch(p, pattern) for pattern in patterns))
        if found:
            return found
    return []


def read_requirements_file(files: dict[str, str], path: str) -> RequirementFiles:
    """What one requirements file of the checkout lists (a SWE-bench spec names the file;
    `-r` followed inside the checkout as for the test files)."""
    out = RequirementFiles()
    seen: dict[str, None] = {}
    _read(files, path, out, seen, depth=0)
    out.requirements = list(seen)
    return out


def read_test_requirements(files: dict[str, str]) -> RequirementFiles:
    """What the checkout's requirements files for tests list (see the module doc)."""
    out = RequirementFiles()
    seen: dict[str, None] = {}
    for path in requirement_files(files):
        _read(files, path, out, seen, depth=0)
    out.requirements = list(seen)
    return out


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) per logical line: comments removed (`#` at the start
    or after whitespace, as pip reads them), `\\` continuations joined."""
    lines: list[tuple[int, str]] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"(^|\s)#.*$", "", raw)
        if not pending:
            start = number
        if line.endswith("\\"):
            pending.append(line[:-1])
            continue
        pending.append(line)
        joined = " ".join(part.strip() for part in pending).strip()
        pending = []
        if joined:
            lines.append((start, joined))
    if pending and " ".join(pending).strip():
        lines.append((start, " ".join(part.strip() for part in pending).strip()))
    return lines


def _read(
    files: dict[str, str], path: str, out: RequirementFiles, seen: dict[str, None], depth: int
) -> None:
    if path in out.files:
        return  # read already (an include cycle, or two files including one)
    out.files.append(path)
    folder = posixpath.dirname(path)
    for number, line in _logical_lines(files[path]):
        include = INCLUDE.match(line)
        if include:
            target = _inside(folder, include.group("path"))
            if target is None:
                reason = "include-outside"
            elif target not in files:
                reason = "include-missing"
            elif depth >= MAX_DEPTH:
                reason = "include-too-deep"
            else:
                _read(files, target, out, seen, depth + 1)
                continue
            out.skipped.append(SkippedLine(path, number, f"requirements.{reason}", line))
            continue
        reason, requirement = _requirement(line)
        if requirement is None:
            out.skipped.append(SkippedLine(path, number, f"requirements.{reason}", line))
            continue
        seen[requirement] = None


def _inside(folder: str, target: str) -> str | None:
    """The checkout path of an include, or None when it leaves the checkout (absolute,
    `..` above the root, a URL)."""
    if "://" in target or target.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", target):
        return None
    clean = posixpath.normpath(posixpath.join(folder, target))
    if clean == ".." or clean.startswith("../") or clean == ".":
        return None
    return clean


def _requirement(line: str) -> tuple[str, str | None]:
    """(reason, None) for a line that is no plain requirement, else ("", requirement)."""
    if line.startswith(("-e", "--editable")):
        return "editable", None
    if line.startswith("-") or re.search(r"\s-{1,2}[A-Za-z]", line):
        return "option", None  # `-c`, `--index-url`; `pkg==1 --hash=...`
    if "://" in line or line.startswith("git+"):
        return "url", None
    if line.startswith((".", "/", "~")) or "/" in line.split(";")[0] or "\\" in line:
        return "path", None
    try:
        requirement = Requirement(line)
    except InvalidRequirement:
        return "invalid", None
    if requirement.url:
        return "url", None
    if canonicalize_name(requirement.name) in COVERAGE_UPLOADERS:
        return "coverage-upload", None
    if requirement.name.lower().endswith(ARCHIVE):
        return "path", None
    if requirement.marker is not None:
        if not requirement.marker.evaluate():
            return "marker-false", None
        requirement.marker = None
    return "", str(requirement)


def provenance_lines(found: RequirementFiles) -> str:
    """For `wheels.txt`: the files read and every line left out, with its reason, so a
    user sees what the image lacks and why (nothing is dropped silently)."""
    if not found.files:
        return ""
    lines = [f"requirements files: {', '.join(found.files)}\n"]
    lines += [f"skipped {s.path}:{s.line} {s.reason}: {s.text[:120]}\n" for s in found.skipped]
    return "".join(lines)


def verifier_bounds(base_image: str) -> list[str]:
    """The verifier's pytest family as requirements to resolve the test requirements
    with, so pytest plugins come in versions that load under it: resolved against the
    newest pytest, moto's `pytest-cov` was 7.1, which needs pluggy's `wrapper=True`
    and broke pytest 7.2.1 at start-up (every test of the task unrun). Upper bounds
    `<=V`, neither `==V` (`fetch_wheels` fetches `==` lines apart, without dependencies,
    as the run's own pins) nor `>=V`: an instance older than pytest V is resolved with the
    index as of its date, where V does not exist yet (astroid-1196, 2022-06, before
    pytest 7.2.1: a closed range made the dated resolution fail and took the newest of
    everything). Their wheels are dropped afterwards (the verifier's own)."""
    pins = verifier_pytest(base_image).pins
    return [str(Requirement(pin.replace("==", "<="))) for pin in pins]


def _resolvable(line: str) -> str:
    """`name==V` as `name>=V,<=V`: `fetch_wheels` fetches `==` lines apart and without
    dependencies (the run's own pins, which pip listed in full); a requirements file's
    pins need their dependencies, as `pip install -r` resolves them."""
    requirement = Requirement(line)
    specs = list(requirement.specifier)
    if len(specs) == 1 and specs[0].operator == "==" and "*" not in specs[0].version:
        version = specs[0].version
        requirement.specifier = SpecifierSet(f">={version},<={version}")
    return str(requirement)


def _bounds(names: list[str], base_image: str) -> list[str]:
    """The verifier's pytest bounds when a pytest plugin (`pytest-*`, by the ecosystem's
    naming rule) is resolved with dependencies; none otherwise, so an image without
    plugins gets exactly the wheels it got before (the bounds would add pytest's own
    dependencies, `attrs`, `py`, `tomli`, to it)."""
    plugins = [
        n
        for n in names
        if "==" not in n and canonicalize_name(Requirement(n).name).startswith("pytest-")
    ]
    return verifier_bounds(base_image) if plugins else []


def fetch_with_test_files(
    fetch: Callable[..., dict[str, bytes]],
    names: list[str],
    files: dict[str, str],
    *,
    base_image: str,
    skip: frozenset[str],
    prior_to: str | None,
) -> dict[str, bytes]:
    """`fetch(names + the checkout's test requirements files + the verifier's pytest)`.

    The files often list tools besides what the tests import (astroid's pins black,
    pylint, mypy and a `types-pkg_resources` the index no longer has): when they cannot
    be resolved together, the image is built without them, as before they were read,
    and `wheels.txt` says why; a task is never lost to a linter's pin. `skip` names
    (the verifier's pytest family, the checkout's own project) are left out."""
    options = {"prior_to": prior_to, "skip": skip}
    found = read_test_requirements(files)
    extra = [
        _resolvable(line)
        for line in found.requirements
        if canonicalize_name(Requirement(line).name) not in skip
    ]
    extra = [line for line in extra if line not in names]
    note = provenance_lines(found)
    try:
        wheels = fetch([*names, *extra, *_bounds(names + extra, base_image)], **options)
    except DependencyError as exc:
        if not extra:
            raise
        wheels = fetch([*names, *_bounds(names, base_image)], **options)
        note += f"requirements files not installed (they do not resolve together): {exc}\n"
    if not note or PROVENANCE not in wheels:
        return wheels
    return {**wheels, PROVENANCE: wheels[PROVENANCE] + note.encode()}
