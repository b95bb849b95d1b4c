"""`repo2rlenv clean` removes only the toolkit's labelled images, keeps and names one a
container uses, and reports the space the engine says it freed.

A unit test over a stand-in engine: the real one is shared with other runs, whose task
images a test must not remove.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from docker.errors import APIError

from repo2rlenv.runtime.cleanup import clean
from repo2rlenv.runtime.owner import LABEL


@dataclass
class _Image:
    id: str
    tags: list[str]
    labels: dict[str, str]
    size: int
    in_use: bool = False

    @property
    def short_id(self) -> str:
        return self.id[:12]


@dataclass
class _Engine:
    """Images, their layers' disk usage, and `images.list/remove`, `df`, `api.prune_builds`."""

    images_held: list[_Image]
    pruned: list[bool] = field(default_factory=list)

    @property
    def images(self) -> _Engine:
        return self

    @property
    def api(self) -> _Engine:
        return self

    def list(self, filters: dict[str, str]) -> list[_Image]:
        return [i for i in self.images_held if filters["label"] in i.labels]

    def remove(self, image_id: str, noprune: bool = False) -> None:
        image = next(i for i in self.images_held if i.id == image_id)
        if image.in_use:
            raise APIError("conflict", explanation="image is being used by running container")
        self.images_held.remove(image)

    def df(self) -> dict[str, Any]:
        return {"LayersSize": sum(i.size for i in self.images_held)}

    def prune_builds(self) -> dict[str, int]:
        self.pruned.append(True)
        return {"SpaceReclaimed": 7_000_000}


def _engine() -> _Engine:
    return _Engine(
        [
            _Image("sha256:aaa", ["rlenv-harvest-env:1"], {LABEL: "env"}, 300_000_000),
            _Image("sha256:bbb", ["rlenv-harvest-env:2"], {LABEL: "env"}, 90_000_000, True),
            _Image("sha256:ccc", ["harness:pi"], {LABEL: "harness"}, 50_000_000),
            _Image("sha256:ddd", ["someone-else:1"], {"other": "x"}, 400_000_000),
        ]
    )


def test_clean_removes_only_labelled_unused_images_and_measures_what_it_freed() -> None:
    engine = _engine()
    report = clean(engine)
    assert sorted(report.removed) == ["harness:pi", "rlenv-harvest-env:1"]
    assert report.kept == [("rlenv-harvest-env:2", "in use by a container")]
    assert report.freed_bytes == 350_000_000
    left = sorted(i.tags[0] for i in engine.images_held)
    assert left == ["rlenv-harvest-env:2", "someone-else:1"]
    assert not engine.pruned and report.build_cache_bytes == 0


def test_dry_run_removes_nothing_and_build_cache_is_asked_for() -> None:
    engine = _engine()
    report = clean(engine, dry_run=True)
    assert len(report.removed) == 3 and len(engine.images_held) == 4
    report = clean(engine, build_cache=True)
    assert engine.pruned and report.build_cache_bytes == 7_000_000


def test_clean_without_an_engine_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from repo2rlenv.cli import main

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'no-engine.sock'}")
    assert main(["clean"]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and "repo2rlenv setup" in lines[0], lines
