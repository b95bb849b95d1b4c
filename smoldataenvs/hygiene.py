"""Dataset hygiene: duplicate questions collapse, and no source dataset dominates.

A *source dataset* is a group of data files linked by content: two tasks whose data
share any file (by sha256) belong to the same group, so the same Titanic CSV copied
into two repositories, or three CSVs merged in one notebook and two of them used in
another cell, count as one dataset. At most `max_per_dataset` tasks are kept per
group, first come first kept (the pipeline's order is deterministic).
"""

from __future__ import annotations

from collections import Counter


class DatasetGroups:
    """Union-find over data file hashes."""

    def __init__(self) -> None:
        self._parent: dict[str, str] = {}

    def _find(self, key: str) -> str:
        self._parent.setdefault(key, key)
        while self._parent[key] != key:
            self._parent[key] = self._parent[self._parent[key]]
            key = self._parent[key]
        return key

    def group(self, hashes: list[str]) -> str:
        """Join `hashes` into one group and return its id (stable: the smallest root)."""
        roots = sorted({self._find(h) for h in hashes})
        for root in roots[1:]:
            self._parent[root] = roots[0]
        return roots[0]

    def peek(self, hashes: list[str]) -> set[str]:
        return {self._find(h) for h in hashes if h in self._parent}


class Hygiene:
    def __init__(self, max_per_dataset: int) -> None:
        self.max_per_dataset = max_per_dataset
        self.groups = DatasetGroups()
        self.kept: Counter[str] = Counter()
        self.seen: set[tuple[str, ...]] = set()

    def duplicate(self, key: tuple[str, ...]) -> bool:
        """True if an equal question was already seen; records it otherwise."""
        if key in self.seen:
            return True
        self.seen.add(key)
        return False

    def full(self, hashes: list[str]) -> bool:
        """Would a task on these files exceed the cap? (Does not record anything.)"""
        roots = self.groups.peek(hashes)
        return sum(self.kept[r] for r in roots) >= self.max_per_dataset

    def admit(self, hashes: list[str]) -> bool:
        """Record a task on these files unless its dataset is full."""
        if self.full(hashes):
            return False
        before = self.groups.peek(hashes)
        total = sum(self.kept.pop(r, 0) for r in before)
        root = self.groups.group(hashes)
        self.kept[root] = total + 1
        return True
