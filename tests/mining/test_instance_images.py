"""Published instance images (issue 26, point 5): a task FROM the instance's own image
when the engine has it (or a registry serves it), its id recorded; else the project's
recipe with a counted reason. Fake engines stand in for the registry (none answers
here); the Docker test tags a small image under SWE-bench's name and proves the task."""

from __future__ import annotations

import io
import json
import tarfile
from types import SimpleNamespace
from typing import Any

import pytest
from docker.errors import APIError, ImageNotFound
from requests.exceptions import ConnectionError as RequestsConnectionError

from repo2rlenv.emit import Draft, YieldReport
from repo2rlenv.formats import read_record
from repo2rlenv.runtime.instance_images import (
    ImageResolver,
    image_names,
    published_dockerfile,
    swebench_image_name,
)
from tests.anchors.test_anchors import CALC_BUGGY, TESTS, repo  # noqa: F401 (fixture)
from tests.mining.test_instance_repair import SUBMISSION, TEST_PATCH
from tests.mining.test_instances import _pipeline, _row, _run, _table

ROW_IMAGE = "nebius/swe-rebench:example__calc-1"
SWEBENCH_NAME = "swebench/sweb.eval.x86_64.example_1776_calc-1:latest"


class FakeEngine:
    """An engine with `local` images (name -> id); `registry` says what a manifest
    lookup does: a set of names it serves, or an exception class for every name."""

    def __init__(self, local: dict[str, str], registry: Any = frozenset()) -> None:
        self.local, self.registry = dict(local), registry
        self.probes: list[str] = []
        self.pulls: list[str] = []
        self.pull_error: Exception | None = None
        self.images = SimpleNamespace(get=self._get)
        self.api = SimpleNamespace(inspect_distribution=self._inspect, pull=self._pull)
        self.closed = 0

    def factory(self, timeout: float = 0) -> FakeEngine:
        return self

    def _get(self, name: str) -> Any:
        if name not in self.local:
            raise ImageNotFound(name)
        return SimpleNamespace(id=self.local[name], attrs={"RepoDigests": []})

    def _inspect(self, name: str) -> dict:
        self.probes.append(name)
        if isinstance(self.registry, type):
            raise self.registry("no registry")
        if name not in self.registry:
            raise APIError("manifest unknown", response=SimpleNamespace(status_code=404))
        return {}

    def close(self) -> None:
        self.closed += 1

    def _pull(self, name: str, stream: bool, decode: bool) -> Any:
        self.pulls.append(name)
        yield {"status": "Pulling from swebench"}
        if isinstance(self.pull_error, Exception):
            raise self.pull_error
        if self.pull_error is not None:  # the engine's own error line
            yield {"error": self.pull_error}
            return
        self.local[name] = "sha256:" + "b" * 64
        yield {"status": "Downloaded newer image"}


def test_the_swebench_name_is_the_harness_one():
    """What swebench 4.1's harness pulls (`instance_image_key`, namespace `swebench`)."""
    assert swebench_image_name("psf__requests-2317") == (
        "swebench/sweb.eval.x86_64.psf_1776_requests-2317:latest"
    )
    assert image_names("Django__django-1", None) == [
        "swebench/sweb.eval.x86_64.django_1776_django-1:latest"
    ]
    assert image_names("a__b-1", "own:1")[0] == "own:1"  # the row's own name first


def test_a_local_image_is_used_and_identified_by_its_id():
    engine = FakeEngine({SWEBENCH_NAME: "sha256:" + "a" * 64})
    image, why = ImageResolver(engine.factory).resolve(image_names("example__calc-1", None))
    assert why is None and image is not None
    assert (image.name, image.image_id, image.found_by) == (
        SWEBENCH_NAME,
        "sha256:" + "a" * 64,
        "local",
    )
    assert engine.probes == []  # present: no registry asked


@pytest.mark.parametrize(
    ("registry", "pull_error", "reason", "pulls"),
    [
        (RequestsConnectionError, None, "image.registry-unreachable", 0),
        (frozenset(), None, "image.absent", 0),
        (frozenset({ROW_IMAGE}), APIError("boom"), "image.pull-failed", 1),
        (frozenset({ROW_IMAGE}), "no space left on device", "image.pull-failed", 1),
        (frozenset({ROW_IMAGE}), None, None, 1),
    ],
)
def test_a_pull_is_tried_only_when_the_registry_serves_the_name(
    registry, pull_error, reason, pulls
):
    engine = FakeEngine({}, registry)
    engine.pull_error = pull_error
    image, why = ImageResolver(engine.factory).resolve([ROW_IMAGE])
    assert why == reason and len(engine.pulls) == pulls
    if reason is None:
        assert image is not None and image.found_by == "pulled"


def test_a_pull_past_its_time_is_ended_and_its_client_closed():
    engine = FakeEngine({}, frozenset({ROW_IMAGE}))
    resolver = ImageResolver(engine.factory, pull_timeout=0)
    assert resolver.resolve([ROW_IMAGE]) == (None, "image.pull-failed")
    assert engine.pulls == [ROW_IMAGE] and engine.closed == 1


def test_a_registry_that_does_not_answer_is_asked_once_per_run():
    engine = FakeEngine({}, RequestsConnectionError)
    resolver = ImageResolver(engine.factory)
    for _ in range(3):
        assert resolver.resolve([ROW_IMAGE]) == (None, "image.registry-unreachable")
    assert engine.probes == [ROW_IMAGE]


def test_without_pulls_or_an_engine_the_reason_says_so():
    assert ImageResolver(FakeEngine({}).factory, pull=False).resolve([ROW_IMAGE]) == (
        None,
        "image.not-pulled",
    )

    def no_engine(timeout: float = 0) -> Any:
        raise RequestsConnectionError("no socket")

    assert ImageResolver(no_engine).resolve([ROW_IMAGE]) == (None, "image.engine-unavailable")


def _drafts(tmp_path, path, commit, engine: FakeEngine | ImageResolver | None, **row):
    fields = {
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": '["test_hidden.py::test_add_is_a_sum"]',
        "PASS_TO_PASS": '["test_calc.py::test_double"]',
        **row,
    }
    table = _table(tmp_path, [_row("example__calc-1", commit, **fields)])
    run = _run()
    run["messages"] = run["messages"][:2]
    run["info"]["submission"] = SUBMISSION
    session = read_record(run, "example__calc-1.traj.json")
    pipeline = _pipeline(tmp_path, path, instances=str(table), kinds=["instance-repair"])
    if isinstance(engine, ImageResolver):
        pipeline.images = engine
    elif engine is not None:
        pipeline.images = ImageResolver(engine.factory)
    return pipeline.session_events(session, "r1", None)


def test_the_task_is_built_from_the_published_image(repo, tmp_path):  # noqa: F811
    path, commit = repo
    engine = FakeEngine({SWEBENCH_NAME: "sha256:" + "a" * 64})
    [draft] = _drafts(tmp_path, path, commit, engine)
    assert isinstance(draft, Draft)
    files = {f.path: f.content.decode() for f in draft.bundle.files}
    env = sorted(p for p in files if p.startswith("environment/"))
    assert env == ["environment/Dockerfile"]  # no copied checkout, no wheels
    assert files["environment/Dockerfile"].startswith(f"FROM {SWEBENCH_NAME}\n")
    assert 'mv "$d" /workspace && ln -s /workspace "$d"' in files["environment/Dockerfile"]
    assert "assert add(2, 3) == 5" in files["tests/hidden/test_hidden.py"]  # still hidden
    swe = draft.bundle.config.metadata.repo2rlenv.swe
    assert swe.image.image_id == "sha256:" + "a" * 64 and swe.image_fallback is None


TOX = "[testenv]\ncommands = pytest {posargs}\n"
TOX_IMAGE = TOX.replace("pytest", "pytest -rA")  # SWE-bench's pre_install edit (Sphinx)


def _base_with(path, commit: str, files: dict[str, str]) -> str:
    """A new base commit: `commit` plus `files` (the fixture's fix stays on its branch)."""
    import git

    repository = git.Repo(path)
    repository.git.checkout(commit)
    for rel, text in files.items():
        (path / rel).write_text(text)
    repository.index.add(list(files))
    actor = git.Actor("t", "t@example.com")
    return repository.index.commit("start", author=actor, committer=actor).hexsha


def test_protected_copies_are_the_images_own(repo, tmp_path):  # noqa: F811
    """A control file the benchmark's set-up edited in the image (`tox.ini`) is put
    back by the verifier as the image has it, and listed in the provenance."""
    path, commit = repo
    base = _base_with(path, commit, {"tox.ini": TOX})
    asked: list[list[str]] = []

    def read_files(image, paths):
        asked.append(paths)
        return {"tox.ini": TOX_IMAGE.encode()}

    images = ImageResolver(FakeEngine({SWEBENCH_NAME: "sha256:1"}).factory)
    images.read_files = read_files  # the engine's part is the Docker test's
    [draft] = _drafts(tmp_path, path, base, images)
    files = {f.path: f.content.decode() for f in draft.bundle.files}
    assert asked == [["tox.ini"]]
    assert files["tests/protected/tox.ini"] == TOX_IMAGE
    assert draft.bundle.config.metadata.repo2rlenv.swe.image_protected_files == ["tox.ini"]
    [recipe] = _drafts(tmp_path, path, base, FakeEngine({}))  # the recipe: the checkout's
    assert {f.path: f.content.decode() for f in recipe.bundle.files}[
        "tests/protected/tox.ini"
    ] == TOX


def test_a_compiled_checkout_is_not_refused_when_its_image_has_it_built(repo, tmp_path):  # noqa: F811
    """The published image holds the built extensions: `instance.build-unsupported` is
    for the recipe, which builds nothing."""
    path, commit = repo
    base = _base_with(path, commit, {"fast.pyx": "def f():\n    return 1\n"})
    without = _drafts(tmp_path, path, base, FakeEngine({}))
    assert [getattr(e, "reason", None) for e in without] == ["instance.build-unsupported"]
    with_image = _drafts(tmp_path, path, base, FakeEngine({SWEBENCH_NAME: "sha256:1"}))
    assert isinstance(with_image[0], Draft)


def test_a_row_image_not_used_is_a_counted_warning(repo, tmp_path):  # noqa: F811
    path, commit = repo
    [draft] = _drafts(
        tmp_path, path, commit, FakeEngine({}, RequestsConnectionError), docker_image=ROW_IMAGE
    )
    files = {f.path for f in draft.bundle.files}
    assert "environment/workspace/calc.py" in files  # the project's recipe
    assert (
        draft.bundle.config.metadata.repo2rlenv.swe.image_fallback == "image.registry-unreachable"
    )
    report = YieldReport(pipeline="sessions")
    report.count(draft)
    assert report.warnings["image.registry-unreachable"] == 1


IMAGE_TEST = (
    "import os\nimport shutil\n\nfrom calc import add\n\n\ndef test_add_is_a_sum():\n"
    '    assert shutil.which("calc-tool"), os.environ["PATH"]  # the image\'s env\n'
    '    assert not os.path.exists("/workspace/.git")  # no history\n'
    '    assert "-rA" in open("/workspace/tox.ini").read()  # the image\'s own copy\n'
    "    assert add(2, 3) == 5\n"
)
IMAGE_TEST_PATCH = (
    "diff --git a/test_hidden.py b/test_hidden.py\nnew file mode 100644\n--- /dev/null\n"
    f"+++ b/test_hidden.py\n@@ -0,0 +1,{IMAGE_TEST.count(chr(10))} @@\n"
    + "".join(f"+{line}\n" for line in IMAGE_TEST.splitlines())
)


def _image_context(checkout: dict[str, str], base: str) -> io.BytesIO:
    """A stand-in for a SWE-bench instance image: the checkout in /testbed with a git
    folder, and an environment of its own (`/opt/env/bin`: a `python3` and a command
    its tests call) that `/root/.bashrc` activates, as the real ones do with conda."""
    dockerfile = (
        f"FROM {base}\nCOPY testbed/ /testbed/\n"
        "RUN mkdir -p /testbed/.git /opt/env/bin"
        ' && ln -s "$(command -v python3)" /opt/env/bin/python3'
        " && printf '#!/bin/sh\\necho 5\\n' > /opt/env/bin/calc-tool"
        " && chmod +x /opt/env/bin/calc-tool"
        " && echo 'export PATH=/opt/env/bin:$PATH' > /root/.bashrc\n"
        "WORKDIR /testbed\n"
    )
    files = {"Dockerfile": dockerfile, **{f"testbed/{k}": v for k, v in checkout.items()}}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    return buffer


@pytest.mark.docker
@pytest.mark.timeout(600)
def test_a_task_from_a_local_swebench_image_is_proven_in_docker(repo, tmp_path, docker_ready):  # noqa: F811
    import docker

    from repo2rlenv.bundle import write_bundle
    from repo2rlenv.runtime import DockerRuntime
    from repo2rlenv.validate import ValidateOptions, validate_one
    from repo2rlenv.validate.runner import SilentProgress

    client = docker.from_env(timeout=300)
    checkout = {"calc.py": CALC_BUGGY, "test_calc.py": TESTS, "tox.ini": TOX_IMAGE}
    context = _image_context(checkout, docker_ready)
    list(
        client.api.build(
            fileobj=context, custom_context=True, tag=SWEBENCH_NAME, rm=True, decode=True
        )
    )
    try:
        path, commit = repo
        base = _base_with(path, commit, {"tox.ini": TOX})
        # the real engine, no pulls
        [draft] = _drafts(tmp_path, path, base, None, test_patch=IMAGE_TEST_PATCH)
        swe = draft.bundle.config.metadata.repo2rlenv.swe
        assert swe.image is not None and swe.image.image_id == client.images.get(SWEBENCH_NAME).id
        assert swe.image_protected_files == ["tox.ini"]  # read from the image
        task = write_bundle(draft.bundle, tmp_path / "out").path
        options = ValidateOptions(reruns=0)
        report = validate_one(task, options, DockerRuntime(), None, SilentProgress())
        assert report.valid, [(f.rule_id, f.message[:300]) for f in report.findings]
        assert report.label.status == "verified"
        ran = [t for t in report.trials if t.label in ("reference", "noop")]
        assert [(t.label, t.reward) for t in ran] == [("reference", 1.0), ("noop", 0.0)]
    finally:
        client.images.remove(SWEBENCH_NAME, force=True)


def test_the_dockerfile_names_the_digest_when_the_registry_gave_one():
    from schemas.provenance import PublishedImage

    image = PublishedImage(
        name="a/b:1", image_id="sha256:1", repo_digest="a/b@sha256:" + "c" * 64, found_by="pulled"
    )
    assert published_dockerfile(image).startswith("FROM a/b@sha256:" + "c" * 64 + "\n")
    assert json.loads(image.model_dump_json())["found_by"] == "pulled"
