"""What tasks are checked against, by name or file: SWE-bench-style instance tables
(read with `--instances`' loader, `mining.instances.load_instances`), a folder of task
folders (a previous run's eval set, notebook tasks), or a `split.json` that `python -m
train` wrote (its held-out tasks).

Named tables are Hub ids; `default` is the documented list. Asked for by name or file,
a table that cannot be read is one line (exit 2); the `default` list takes the tables
that can be read and says which were not (`Benchmarks.unavailable`), never silently."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from repo2rlenv.bundle import find_task_dirs, read_task_dir
from repo2rlenv.decontam.facts import diff_files, of_tree, repo_key
from repo2rlenv.hub import SourceUnavailable
from repo2rlenv.mining.instances import InstanceError, load_instances

NAMED: dict[str, str] = {
    "swe-bench": "princeton-nlp/SWE-bench",
    "swe-bench-lite": "princeton-nlp/SWE-bench_Lite",
    "swe-bench-verified": "princeton-nlp/SWE-bench_Verified",
    "swe-bench-multilingual": "SWE-bench/SWE-bench_Multilingual",
    "swe-rebench-leaderboard": "nebius/SWE-rebench-leaderboard",
}
"""Short names for the public tables; any other Hub id or local file works as well."""
DEFAULT = "default"
"""Expands to every table of NAMED; those that cannot be read are reported, not fatal."""
SPLIT_FORMAT_VERSION = 1
"""The split.json version `train.data.split` writes (read here, not imported: `train` is a
layer above; tests/test_decontam.py checks the two agree)."""


class TableError(Exception):
    """A table asked for by name or file cannot be read; the message is one line."""


@dataclass(frozen=True)
class Entry:
    """One benchmark instance (or held-out task), reduced to what the rules compare."""

    instance_id: str
    repository: str | None = None
    commits: frozenset[str] = frozenset()
    files: frozenset[str] = frozenset()
    statement: str = ""
    data_hashes: frozenset[str] = frozenset()
    content_hash: str | None = None
    created_at: str | None = None
    """When the instance's pull request was opened (ISO 8601, the table's `created_at`):
    the only date offline data gives a commit, used by the commit window rule."""


@dataclass(frozen=True)
class Table:
    name: str
    entries: list[Entry]


@dataclass
class Benchmarks:
    tables: list[Table] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)
    """Table -> why it could not be read (only tables of the `default` list)."""


def _instance_table(name: str, source: str) -> Table:
    table = load_instances(source)
    entries = [
        Entry(
            instance_id=row.instance_id,
            repository=repo_key(row.repo),
            commits=frozenset({row.base_commit}),
            files=diff_files(row.patch) | diff_files(row.test_patch),
            statement=row.problem_statement,
            created_at=row.created_at,
        )
        for row in table.instances.values()
    ]
    return Table(name, entries)


def _split_table(name: str, path: Path) -> Table:
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or data.get("version") != SPLIT_FORMAT_VERSION:
        raise TableError(
            f"split.version: {path} is not a version {SPLIT_FORMAT_VERSION} split.json"
        )
    heldout = data.get("heldout")
    tasks = data.get("tasks") or {}
    if not isinstance(heldout, list) or not all(isinstance(t, str) for t in heldout):
        raise TableError(f"split.malformed: {path} has no list of held-out task ids")
    entries = []
    for task_id in heldout:
        row = tasks.get(task_id) if isinstance(tasks, dict) else None
        digest = row.get("content_hash") if isinstance(row, dict) else None
        entries.append(Entry(task_id, content_hash=digest if isinstance(digest, str) else None))
    return Table(name, entries)


def _task_folders(name: str, path: Path) -> Table:
    entries = []
    for task_dir in find_task_dirs([path]):
        facts = of_tree(read_task_dir(task_dir))
        entries.append(
            Entry(
                instance_id=facts.instance_id or facts.task_id,
                repository=facts.repository,
                commits=frozenset({facts.commit}) if facts.commit else frozenset(),
                files=facts.files,
                statement=facts.instruction,
                data_hashes=frozenset(facts.data_hashes),
                content_hash=facts.content_hash,
            )
        )
    if not entries:
        raise TableError(f"decontam.no-tasks: {path} holds no task folder")
    return Table(name, entries)


def load_table(name: str) -> Table:
    """One table by short name, Hub id or path; TableError when it cannot be read."""
    source = NAMED.get(name, name)
    local = Path(source).expanduser()
    try:
        if local.is_dir():
            return _task_folders(name, local)
        if local.is_file() and local.suffix == ".json" and _is_split(local):
            return _split_table(name, local)
        return _instance_table(name, source)
    except (SourceUnavailable, InstanceError, OSError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TableError(f"decontam.table-unavailable: {name}: {first}") from exc


def _is_split(path: Path) -> bool:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "heldout" in data


def load_benchmarks(names: list[str]) -> Benchmarks:
    """Every table named (in order, each once); `default` adds the NAMED tables that
    can be read and records the others in `unavailable`."""
    found = Benchmarks()
    seen: set[str] = set()
    for name in names:
        expanded = list(NAMED) if name == DEFAULT else [name]
        for each in expanded:
            if each in seen:
                continue
            seen.add(each)
            try:
                found.tables.append(load_table(each))
            except TableError as exc:
                if name != DEFAULT:
                    raise
                found.unavailable[each] = str(exc)
    return found
