"""The lookups one run builds once per table: ids, (repository, commit), data hashes,
content hashes, and a MinHash LSH Ensemble (`datasketch`) over the statements, which
finds the statements that contain most of a text without comparing it to every row."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from datasketch import MinHash, MinHashLSHEnsemble

from repo2rlenv.decontam.tables import Entry, Table

SHINGLE_WORDS = 3
"""Shingles are runs of 3 lower-cased words: long enough that prose shares few by
chance, short enough that an edited sentence keeps most of its shingles."""
TEXT_THRESHOLD = 0.7
"""A text matches a statement when at least 70% of its shingles are the statement's
(measured exactly, after the LSH proposes the statement)..."""
MIN_COVERAGE = 0.5
"""...and those shared shingles are at least half of the statement's: a short text that
a long statement happens to contain (a version list, a traceback line) is not a copy of
that statement."""
LSH_THRESHOLD = 0.5
"""The LSH proposes statements above this estimate (below TEXT_THRESHOLD, so an
estimate's error does not lose a match; the exact check decides)."""
MIN_SHINGLES = 20
"""Texts (or sections) shorter than this are not compared: a few words of boilerplate
are in many statements."""
NUM_PERM = 128

_WORD = re.compile(r"[a-z0-9_]+")
_SECTION = re.compile(r"^\s*</?[A-Za-z_][\w-]*>", re.MULTILINE)


def shingles(text: str) -> frozenset[str]:
    words = _WORD.findall(text.lower())
    if len(words) < SHINGLE_WORDS:
        return frozenset({" ".join(words)}) if words else frozenset()
    return frozenset(
        " ".join(words[i : i + SHINGLE_WORDS]) for i in range(len(words) - SHINGLE_WORDS + 1)
    )


def sections(text: str) -> Iterator[str]:
    """The whole text, then its parts between tag lines (`<pr_description>`): a harness
    wraps the issue in its own instructions, and the issue alone is what a benchmark
    row holds. Not at headings: issue templates share their headed parts (system
    details, versions), which would match many statements."""
    yield text
    cuts = [m.start() for m in _SECTION.finditer(text)]
    if not cuts:
        return
    bounds = [0, *cuts, len(text)]
    for start, end in itertools.pairwise(bounds):
        part = text[start:end]
        if part.strip() and len(part) < len(text):
            yield part


def _minhash(items: frozenset[str]) -> MinHash:
    sketch = MinHash(num_perm=NUM_PERM)
    sketch.update_batch([s.encode() for s in sorted(items)])
    return sketch


@dataclass
class TableIndex:
    name: str
    by_id: dict[str, Entry] = field(default_factory=dict)
    by_repo: dict[str, list[tuple[str, Entry]]] = field(default_factory=dict)
    """owner/name -> (commit, instance) of its rows."""
    by_data: dict[str, Entry] = field(default_factory=dict)
    by_content: dict[str, Entry] = field(default_factory=dict)
    statements: dict[str, frozenset[str]] = field(default_factory=dict)
    lsh: MinHashLSHEnsemble | None = None

    def similar(self, text: str) -> list[tuple[str, float]]:
        """(instance id, containment) of each statement holding at least TEXT_THRESHOLD
        of the shingles of the text or of one of its sections, these making at least
        MIN_COVERAGE of the statement; best first."""
        if self.lsh is None:
            return []
        best: dict[str, float] = {}
        for part in sections(text):
            query = shingles(part)
            if len(query) < MIN_SHINGLES:
                continue
            for key in self.lsh.query(_minhash(query), len(query)):
                statement = self.statements[key]
                shared = len(query & statement)
                score = shared / len(query)
                if shared < MIN_COVERAGE * len(statement):
                    continue
                if score >= TEXT_THRESHOLD and score > best.get(key, 0.0):
                    best[key] = score
        return sorted(best.items(), key=lambda item: (-item[1], item[0]))


def build_index(table: Table) -> TableIndex:
    index = TableIndex(table.name)
    sketches = []
    for entry in table.entries:
        index.by_id.setdefault(entry.instance_id, entry)
        for commit in entry.commits:
            if entry.repository:
                index.by_repo.setdefault(entry.repository, []).append((commit, entry))
        for digest in entry.data_hashes:
            index.by_data.setdefault(digest, entry)
        if entry.content_hash:
            index.by_content.setdefault(entry.content_hash, entry)
        items = shingles(entry.statement)
        if len(items) >= MIN_SHINGLES and entry.instance_id not in index.statements:
            index.statements[entry.instance_id] = items
            sketches.append((entry.instance_id, _minhash(items), len(items)))
    if sketches:
        index.lsh = MinHashLSHEnsemble(threshold=LSH_THRESHOLD, num_perm=NUM_PERM)
        index.lsh.index(sketches)
    return index
