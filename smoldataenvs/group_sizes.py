"""How many rows of a data file hold each key of a grouping: an upper bound of a group's
size after the notebook's steps (a filter only removes rows), read without running them.

A group of one row has that row's value as its mean (sum, median, ...), so a question
about it is a look-up in disguise (`derived_keys.one_row_group`,
`derived_keys.one_row_groups`). Only CSV/TSV files are read, with the standard
library's `csv`, once per file and grouping; keys compare as the file's text reads
back (`'2.50'` and `2.5` are one key, as pandas parses them).
"""

from __future__ import annotations

import csv
from collections import Counter
from functools import lru_cache
from pathlib import Path

TEXT_TABLES = (".csv", ".tsv", ".txt", ".tab")
SNIFF_CHARS = 65536
"""Enough of a file to tell tabs from commas."""


def key_of(value: object) -> str | float:
    """A cell or a label as one comparable key: a number as a float, else its text."""
    text = str(value).strip()
    try:
        return float(text)
    except ValueError:
        return text


def column_counts(path: Path, columns: list[str]) -> Counter | None:
    """Rows per key tuple of `columns` in a CSV/TSV file; None when the file is of
    another kind, unreadable, or lacks a column (an added `Route`: sizes unknown).
    Read once per file version and grouping: a notebook asks of one file many times."""
    if path.suffix.lower() not in TEXT_TABLES:
        return None
    try:
        stat = path.stat()
    except OSError:
        return None
    return _counted(str(path), tuple(columns), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _counted(path: str, columns: tuple[str, ...], _mtime: int, _size: int) -> Counter | None:
    """`column_counts` for one version of a file (its time and size are the cache key);
    callers only read the Counter."""
    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as handle:
            sample = handle.read(SNIFF_CHARS)
            handle.seek(0)
            suffix = Path(path).suffix.lower()
            tabs = suffix in (".tsv", ".tab") or sample.count("\t") > sample.count(",")
            reader = csv.reader(handle, delimiter="\t" if tabs else ",")
            header = [h.strip() for h in next(reader, [])]
            if not set(columns) <= set(header):
                return None
            at = [header.index(c) for c in columns]
            return Counter(
                tuple(key_of(row[i]) for i in at) for row in reader if len(row) > max(at)
            )
    except (OSError, csv.Error):
        return None


def key_occurrences(path: Path, columns: list[str], keys: tuple) -> int | None:
    """How many rows of a CSV/TSV file hold `keys` in `columns` (None: sizes unknown)."""
    counts = column_counts(path, columns)
    return None if counts is None else counts[tuple(key_of(k) for k in keys)]
