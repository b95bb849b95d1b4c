from __future__ import annotations

import json
import math
import random
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from tests.train.synthetic import Spec, skewed_specs, task_id_of, write_specs
from train.data.split import Split, SplitSettings, apportion, rank, read_heldout, split_tasks
from train.data.tasks import TaskRecord, load_tasks


def _split(root: Path, **settings: object) -> Split:
    return split_tasks(load_tasks(root).tasks, SplitSettings.model_validate(settings))


def _sides(split: Split) -> dict[str, str]:
    return dict(split.side)


def test_split_is_deterministic_and_independent_of_input_order(skewed_root: Path) -> None:
    tasks = load_tasks(skewed_root).tasks
    first = split_tasks(tasks).to_json()
    shuffled = list(tasks)
    random.Random(3).shuffle(shuffled)
    assert split_tasks(shuffled).to_json() == first
    assert split_tasks(list(tasks)).to_json() == first
    other_seed = split_tasks(tasks, SplitSettings(seed=1))
    assert other_seed.to_json() != first


def test_records_stay_on_one_side(skewed_root: Path, skewed: list[Spec]) -> None:
    split = _split(skewed_root)
    sides: dict[tuple[str, str], set[str]] = defaultdict(set)
    for spec in skewed:
        if spec.broken is None:
            sides[(spec.dataset, spec.record_id)].add(split.side[task_id_of(spec)])
    assert all(len(s) == 1 for s in sides.values())
    assert any(s == {"heldout"} for s in sides.values())


def test_datasets_stay_on_one_side_when_grouped_by_dataset(
    skewed_root: Path, skewed: list[Spec]
) -> None:
    split = _split(skewed_root, group_by="dataset", max_fraction=0.5)
    sides: dict[str, set[str]] = defaultdict(set)
    for spec in skewed:
        if spec.broken is None:
            sides[spec.dataset].add(split.side[task_id_of(spec)])
    assert all(len(s) == 1 for s in sides.values())
    assert any(s == {"heldout"} for s in sides.values())


@pytest.mark.parametrize("fraction", [0.02, 0.1, 0.25])
def test_caps_and_targets(skewed_root: Path, skewed: list[Spec], fraction: float) -> None:
    split = _split(skewed_root, max_fraction=fraction)
    valid = [s for s in skewed if s.broken is None]
    for source, target in (("repo2rlenv", 40), ("smoldataenvs", 150)):
        members = [s for s in valid if s.source_group == source]
        cap = min(target, math.floor(fraction * len(members)))
        held = [s for s in members if split.side[task_id_of(s)] == "heldout"]
        assert len(held) <= cap
        groups = Counter((s.dataset, s.record_id) for s in members)
        strata = len({s.kind_or_unknown for s in members})
        # The walk stops at the first group that does not fit: less than one group short
        # per stratum.
        assert len(held) >= cap - strata * (max(groups.values()) - 1)
        assert split.sources[source].cap == cap


def test_held_out_kind_mix_follows_the_set(skewed_root: Path, skewed: list[Spec]) -> None:
    split = _split(skewed_root)
    mined = [s for s in skewed if s.broken is None and s.source_group == "repo2rlenv"]
    held = [s for s in mined if split.side[task_id_of(s)] == "heldout"]
    share = sum(s.kind == "build" for s in mined) / len(mined)
    held_share = sum(s.kind == "build" for s in held) / len(held)
    assert abs(held_share - share) < 0.12
    for kind in {s.kind_or_unknown for s in mined}:
        of_kind = [s for s in mined if s.kind_or_unknown == kind]
        assert any(split.side[task_id_of(s)] == "train" for s in of_kind)


def _specs(kinds: list[str], prefix: str = "t", per_record: int = 1) -> list[Spec]:
    return [
        Spec(
            task_id=f"{prefix}{i:04d}",
            folder="mined",
            kind=kind,
            generator="repo2rlenv",
            dataset="hub/d",
            record_id=f"{prefix}-rec-{i // per_record}",
            source_format="pi-v3",
            difficulty=None,
        )
        for i, kind in enumerate(kinds)
    ]


def test_small_sets_hold_out_one_group_per_kind_but_never_a_whole_kind(tmp_path: Path) -> None:
    kinds = ["repair", "build", "extend", "qa"] * 2
    split = _split(write_specs(tmp_path, _specs(kinds)), max_fraction=0.5)
    held = Counter(split.tasks[t].kind for t in split.ids("heldout"))
    assert held == Counter({"repair": 1, "build": 1, "extend": 1, "qa": 1})


def test_one_task_per_kind_holds_nothing_out(demo_tasks: Path) -> None:
    split = _split(demo_tasks, max_fraction=0.5)
    assert split.ids("heldout") == []
    assert len(split.ids("train")) == 4


def test_adding_another_source_changes_nothing_here(tmp_path: Path) -> None:
    base = skewed_specs(seed=11, mined=500, notebooks=100)
    more = [
        Spec(f"extra{i:04d}", "notebooks-2", "qa", "smoldataenvs", f"kaggle/new-{i % 7}",
             f"new-{i // 3}.ipynb", "ipynb", "easy")
        for i in range(300)
    ]  # fmt: skip
    before = _sides(_split(write_specs(tmp_path / "a", base)))
    after = _sides(_split(write_specs(tmp_path / "b", base + more)))
    mined = [task_id_of(s) for s in base if s.broken is None and s.source_group == "repo2rlenv"]
    assert [before[t] for t in mined] == [after[t] for t in mined]


def test_adding_tasks_only_moves_the_marginal_held_out_groups(tmp_path: Path) -> None:
    """One stratum whose quota is pinned by the target (40): a task's side changes only
    when a new group ranks ahead of it. Train tasks never move; the held-out ones that do
    are the lowest-ranked, and each is matched by a new held-out task (give or take the
    part of one group the walk can leave unfilled)."""
    rng = random.Random(5)
    base = _specs(["build"] * 600, "a", per_record=2)
    added = _specs(["build"] * 300, "b", per_record=3)
    before = _split(write_specs(tmp_path / "a", base))
    after = _split(write_specs(tmp_path / "b", base + added))
    assert len(before.ids("heldout")) == 40
    old = [task_id_of(s) for s in base]
    became_held = [t for t in old if before.side[t] == "train" and after.side[t] == "heldout"]
    left_held = [t for t in old if before.side[t] == "heldout" and after.side[t] == "train"]
    new_held = [t for t in (task_id_of(s) for s in added) if after.side[t] == "heldout"]
    assert became_held == []
    assert len(left_held) <= len(new_held) + 2
    stayed = [t for t in old if before.side[t] == after.side[t] == "heldout"]
    assert stayed
    worst_stayed = max(rank(0, before.group_of[t]) for t in stayed)
    assert all(rank(0, before.group_of[t]) > worst_stayed for t in left_held)
    sample = rng.sample([t for t in old if before.side[t] == "train"], 50)
    assert all(after.side[t] == "train" for t in sample)


def test_split_json_lists_every_task_once(skewed_root: Path, tmp_path: Path) -> None:
    split = _split(skewed_root)
    data = json.loads(split.write(tmp_path / "split.json").read_text())
    train, held = set(data["train"]), set(data["heldout"])
    assert not train & held
    assert train | held == set(data["tasks"]) == set(split.side)
    assert all(data["tasks"][t]["side"] == "heldout" for t in held)
    assert data["settings"]["seed"] == 0
    assert read_heldout(tmp_path / "split.json") == split.ids("heldout") != []


@pytest.mark.parametrize(
    ("total", "weights", "limits", "expected"),
    [
        (3, {"a": 1, "b": 1, "c": 1}, {"a": 5, "b": 5, "c": 5}, {"a": 1, "b": 1, "c": 1}),
        (10, {"a": 90, "b": 10}, {"a": 100, "b": 100}, {"a": 9, "b": 1}),
        (10, {"a": 90, "b": 10}, {"a": 100, "b": 0}, {"a": 10, "b": 0}),
        (10, {"a": 5, "b": 5}, {"a": 2, "b": 3}, {"a": 2, "b": 3}),
        (0, {"a": 5}, {"a": 5}, {"a": 0}),
    ],
)
def test_apportion(
    total: int, weights: dict[str, int], limits: dict[str, int], expected: dict[str, int]
) -> None:
    assert apportion(total, weights, limits, seed=0) == expected


def test_duplicate_ids_are_refused(skewed_root: Path) -> None:
    task: TaskRecord = load_tasks(skewed_root).tasks[0]
    with pytest.raises(ValueError, match="unique"):
        split_tasks([task, task])
