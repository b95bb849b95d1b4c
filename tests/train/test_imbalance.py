from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from tests.train.synthetic import Spec, task_id_of, write_specs
from train.data.imbalance import ImbalanceSettings, build_report
from train.data.split import Split, split_tasks
from train.data.tasks import load_tasks
from train.launch.plot import render_chart, write_chart


@pytest.fixture(scope="module")
def split(skewed_root: Path) -> Split:
    return split_tasks(load_tasks(skewed_root).tasks)


def _valid(specs: list[Spec]) -> list[Spec]:
    return [s for s in specs if s.broken is None]


def test_cells_match_a_direct_count(split: Split, skewed: list[Spec]) -> None:
    data = build_report(split).to_dict()
    expected: Counter[tuple[str, ...]] = Counter()
    for spec in _valid(skewed):
        key = (spec.source_group, spec.kind_or_unknown, spec.difficulty_or_unknown,
               spec.source_format)  # fmt: skip
        expected[(*key, split.side[task_id_of(spec)])] += 1
    seen: Counter[tuple[str, ...]] = Counter()
    for cell in data["cells"]:
        key = (cell["source_group"], cell["kind"], cell["difficulty"], cell["source_format"])
        seen[(*key, "train")] += cell["train"]
        seen[(*key, "heldout")] += cell["heldout"]
        assert cell["share"] == pytest.approx(cell["total"] / len(_valid(skewed)), abs=1e-6)
    assert +seen == expected


def test_marginals_and_dominance_match_a_direct_count(split: Split, skewed: list[Spec]) -> None:
    report = build_report(split)
    valid = _valid(skewed)
    kinds = Counter(s.kind_or_unknown for s in valid)
    assert {k: c.total for k, c in report.marginals["kind"].items()} == kinds
    formats = Counter(s.source_format for s in valid)
    assert {k: c.total for k, c in report.marginals["source_format"].items()} == formats
    held = Counter(s.source_group for s in valid if split.side[task_id_of(s)] == "heldout")
    assert {k: c.heldout for k, c in report.marginals["source_group"].items()} == held
    top, count = kinds.most_common(1)[0]
    assert report.dominant_kind == top == "build"
    assert report.dominant_share == pytest.approx(count / len(valid))
    assert count / len(valid) > 0.5
    assert any("'build' dominates" in w for w in report.warnings)


def _simulate(split: Split, weights: dict[str, float], draws: int, seed: int) -> dict[str, float]:
    ids = sorted(weights)
    picks = random.Random(seed).choices(ids, weights=[weights[t] for t in ids], k=draws)
    counts = Counter(split.tasks[t].kind for t in picks)
    return {kind: n / draws for kind, n in counts.items()}


def test_weights_make_the_sampled_kind_mix_uniform(split: Split) -> None:
    report = build_report(split)
    assert set(report.task_weights) == set(split.ids("train"))
    mix = _simulate(split, report.task_weights, draws=200_000, seed=0)
    kinds = {split.tasks[t].kind for t in split.ids("train")}
    assert set(mix) == kinds
    for share in mix.values():
        assert abs(share - 1 / len(kinds)) < 0.02
    assert sum(report.task_weights.values()) / len(report.task_weights) == pytest.approx(1.0)


def test_no_rebalance_samples_as_mined(split: Split) -> None:
    report = build_report(split, ImbalanceSettings(rebalance=False))
    assert set(report.task_weights.values()) == {1.0}
    mix = _simulate(split, report.task_weights, draws=100_000, seed=1)
    train = Counter(split.tasks[t].kind for t in split.ids("train"))
    for kind, n in train.items():
        assert abs(mix[kind] - n / sum(train.values())) < 0.01
    assert any("rebalancing is off" in w for w in report.warnings)


def test_missing_kinds_and_balanced_sets(tmp_path: Path) -> None:
    specs = [
        Spec(f"t{i}", "m", kind, "repo2rlenv", "d", f"r{i}", "pi-v3", None)
        for i, kind in enumerate(["build", "repair", "extend"] * 10)
    ]
    report = build_report(split_tasks(load_tasks(write_specs(tmp_path, specs)).tasks))
    assert report.warnings == ["no tasks of kind qa"]
    assert report.dominant_share == pytest.approx(1 / 3)
    assert not report.dominates


def test_chart_bars_show_the_counts(split: Split, skewed: list[Spec]) -> None:
    report = build_report(split)
    fig = render_chart(report)
    left, right = fig.axes[:2]
    kinds = [label.get_text() for label in left.get_xticklabels()]
    valid = _valid(skewed)
    by_kind = Counter(s.kind_or_unknown for s in valid)
    assert kinds == [k for k, _ in by_kind.most_common()]
    heights = [bar.get_height() for bar in left.patches]
    train = [sum(1 for s in valid if s.kind_or_unknown == k and
                 split.side[task_id_of(s)] == "train") for k in kinds]  # fmt: skip
    assert heights == train + [by_kind[k] - n for k, n in zip(kinds, train, strict=True)]
    sampled = [bar.get_height() for bar in right.patches[len(kinds) :]]
    assert sampled == pytest.approx([1 / len(kinds)] * len(kinds))
    assert "build" in fig.get_suptitle()


def test_chart_file_is_a_png(split: Split, tmp_path: Path) -> None:
    from matplotlib.image import imread

    path = write_chart(build_report(split), tmp_path / "chart.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width, _ = imread(path).shape
    assert width > height > 300
    assert not list(tmp_path.glob(".*.tmp"))
