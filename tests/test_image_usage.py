"""`repo2rlenv images`: per-task build time and size, the layers a repository version's
images share, and the disk they take, read from the engine's history without building."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import docker
import pytest

from repo2rlenv.bundle import find_task_dirs, read_task_dir
from repo2rlenv.cli import main
from repo2rlenv.runtime.image_usage import (
    NO_GROUP,
    ImageUsage,
    build_seconds,
    group_of,
    history_steps,
    summarize,
)
from repo2rlenv.runtime.images import BUILD_STARTED_LABEL
from schemas import TaskConfig

pytestmark = pytest.mark.timeout(300)


def _history(*steps: tuple[str, str, int]) -> list[dict]:
    """`docker history` entries, newest first, from (id, instruction, size) oldest first."""
    return [{"Id": i, "CreatedBy": c, "Size": s} for i, c, s in reversed(steps)]


BASE = [("<missing>", "debootstrap", 300), ("<missing>", "COPY ca.pem", 1)]


def test_steps_are_shared_only_with_everything_under_them() -> None:
    first = history_steps(
        _history(*BASE, ("sha256:a", "RUN pip install x", 50), ("sha256:b", "COPY ws", 7))
    )
    second = history_steps(
        _history(*BASE, ("sha256:a", "RUN pip install x", 50), ("sha256:c", "COPY ws", 9))
    )
    other_base = history_steps(
        _history(("<missing>", "other", 300), ("<missing>", "COPY ca.pem", 1))
    )
    assert [s.size for s in first] == [300, 1, 50, 7]  # oldest first
    assert [s.key for s in first[:3]] == [s.key for s in second[:3]]
    assert first[3].key != second[3].key
    # the same instruction and size over another base is another layer
    assert other_base[1].key != first[1].key


def _usage(
    task: str, group: str, image: str, history: list[dict] | None, build_s=None
) -> ImageUsage:
    if history is None:
        return ImageUsage(task=task, group=group, image=image, present=False)
    steps = history_steps(history)
    size = sum(s.size for s in steps)
    return ImageUsage(
        task=task,
        group=group,
        image=image,
        present=True,
        size_bytes=size,
        build_s=build_s,
        steps=steps,
    )


def test_groups_share_their_version_layers_and_the_disk_counts_each_layer_once() -> None:
    v1a = _history(*BASE, ("sha256:env1", "RUN spec", 100), ("sha256:w1", "COPY ws", 10))
    v1b = _history(*BASE, ("sha256:env1", "RUN spec", 100), ("sha256:w2", "COPY ws", 20))
    v2 = _history(*BASE, ("sha256:env2", "RUN spec", 200), ("sha256:w3", "COPY ws", 30))
    report = summarize(
        [
            _usage("t1", "repo 1.0", "img:1", v1a, build_s=60.0),
            _usage("t2", "repo 1.0", "img:2", v1b, build_s=5.0),
            _usage("t2-again", "repo 1.0", "img:2", v1b, build_s=5.0),  # one image, two tasks
            _usage("t3", "repo 2.0", "img:3", v2),
            _usage("t4", "repo 2.0", "img:4", None),
        ]
    )
    groups = {g.group: g for g in report.groups}
    assert groups["repo 1.0"].tasks == 3 and groups["repo 1.0"].images == 2
    assert groups["repo 1.0"].shared_bytes == 301 + 100
    assert groups["repo 1.0"].disk_bytes == 301 + 100 + 10 + 20
    assert groups["repo 2.0"].images == 1 and groups["repo 2.0"].shared_bytes == 301 + 200 + 30
    assert report.images_bytes == 411 + 421 + 531  # img:2 once
    assert report.disk_bytes == 301 + 100 + 10 + 20 + 200 + 30
    assert report.missing == 1
    assert report.build_s == 65.0


def test_build_time_is_from_the_label_to_the_image_creation() -> None:
    attrs = {
        "Created": "2026-12-05T10:02:03.123456789Z",
        "Config": {"Labels": {BUILD_STARTED_LABEL: "2026-12-05T10:00:00.000Z"}},
    }
    assert build_seconds(attrs) == 123.1
    assert build_seconds({"Created": attrs["Created"], "Config": {"Labels": {}}}) is None
    went_back = {**attrs, "Created": "2026-12-05T09:00:00Z"}
    assert build_seconds(went_back) is None
    assert build_seconds({**attrs, "Created": "yesterday"}) is None


def _metadata(block: str):
    text = f'schema_version = "1.4"\n[metadata.repo2rlenv]\ngenerator = "repo2rlenv"\n{block}'
    import tomllib

    return TaskConfig.model_validate(tomllib.loads(text)).metadata.repo2rlenv


def test_the_group_is_the_recipe_version_else_the_anchored_commit() -> None:
    recipe = _metadata(
        "[metadata.repo2rlenv.swe.recipe]\n"
        'source = "swebench 4.1.0"\nrepo = "sympy/sympy"\nversion = "1.12"\nimage_python = "3.9"\n'
        "[metadata.repo2rlenv.source]\n"
        'dataset = "d"\nrecord_id = "r"\nformat = "f"\nrepository = "https://github.com/sympy/sympy"\n'
        'commit = "39de9a2698ad4bb90681c0fdb70b30a78233145f"\n'
    )
    assert group_of(recipe) == "sympy/sympy 1.12"
    anchored = _metadata(
        "[metadata.repo2rlenv.source]\n"
        'dataset = "d"\nrecord_id = "r"\nformat = "f"\nrepository = "https://github.com/a/b"\n'
        'commit = "0123456789abcdef"\n'
    )
    assert group_of(anchored) == "https://github.com/a/b@0123456789ab"
    assert group_of(None) == NO_GROUP


@pytest.mark.docker
def test_images_reads_a_real_build_time_and_size(
    docker_ready, examples_dir, tmp_path, capsys
) -> None:
    """A task built by the Docker runtime now has its build time recorded; an unbuilt one
    is counted, not guessed."""
    from repo2rlenv.runtime import DockerRuntime

    tasks = find_task_dirs([examples_dir])[:2]
    for task in tasks:  # unique contexts: each is built here, by this test
        dockerfile = task / "environment" / "Dockerfile"
        dockerfile.write_text(dockerfile.read_text() + f"\n# {uuid.uuid4().hex}\n")
    runtime = DockerRuntime()
    tag = runtime.prepare(read_task_dir(tasks[0]))
    try:
        code = main(["images", "--json", "-", *map(str, tasks)])
        report = json.loads(capsys.readouterr().out)
    finally:
        docker.from_env().images.remove(tag, force=True)
    assert code == 0
    built, unbuilt = report["tasks"]
    assert built["image"] == tag and built["present"] and built["size_bytes"] > 0
    assert built["build_s"] is not None and 0 <= built["build_s"] < 300
    assert not unbuilt["present"] and unbuilt["build_s"] is None
    assert report["missing"] == 1
    assert report["disk_bytes"] == built["size_bytes"] == report["images_bytes"]


def test_images_without_tasks_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    assert main(["images", str(tmp_path)]) == 2
    assert "no task.toml" in capsys.readouterr().err
