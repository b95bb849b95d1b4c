"""The Docker runtime with a fake engine that fails: what is the engine's (no answer, a
server error) is infrastructure, retried within the bound and then `EngineError` or a
trial `error`; what is the task's build (a failed step, a Dockerfile the engine cannot
parse) is `ImageBuildError`, never retried. No engine runs."""

from __future__ import annotations

import pytest
import requests
from docker.errors import APIError, ImageNotFound

from repo2rlenv.bundle import read_task_dir
from repo2rlenv.runtime import DockerRuntime, EngineError, TrialRequest
from repo2rlenv.runtime.base import INFRA_RETRIES
from repo2rlenv.runtime.images import ImageBuildError


def _api_error(code: int, text: str) -> APIError:
    response = requests.Response()
    response.status_code, response.reason = code, text
    response.url = "http+docker://localhost/v1.41/build"
    return APIError(text, response=response, explanation=text)


class FakeEngine:
    """A docker-py client whose builds and container starts fail as `fail` says: an
    exception to raise, or build log chunks to stream. Counts the attempts."""

    def __init__(self, build=None, start: Exception | None = None) -> None:
        self._build, self._start = build, start
        self.builds = self.starts = 0
        self.api, self.images, self.containers = self, self, self

    def get(self, ref: str):  # images.get: nothing is built yet
        raise ImageNotFound(ref)

    def build(self, **_kwargs):
        self.builds += 1
        if isinstance(self._build, Exception):
            raise self._build
        return iter(self._build)

    def run(self, image: str, **_kwargs):  # containers.run
        self.starts += 1
        raise self._start


@pytest.fixture
def tree(examples_dir):
    return read_task_dir(examples_dir / "example-repair-median")


@pytest.mark.parametrize(
    "failure",
    [
        requests.exceptions.ConnectionError("('Connection aborted.', FileNotFoundError(2))"),
        _api_error(500, "Internal Server Error: failed to create layer"),
    ],
)
def test_a_build_the_engine_could_not_do_is_infrastructure_after_retries(tree, failure):
    engine = FakeEngine(build=failure)
    with pytest.raises(EngineError) as caught:
        DockerRuntime(client=engine).prepare(tree)
    assert engine.builds == 1 + INFRA_RETRIES and caught.value.retries == INFRA_RETRIES


@pytest.mark.parametrize(
    "failure",
    [
        [
            {"stream": "Step 2/3 : RUN exit 3\n"},
            {"error": "The command returned a non-zero code: 3"},
        ],
        _api_error(400, "dockerfile parse error line 2: unknown instruction: RUNN"),
    ],
)
def test_a_build_that_fails_on_the_tasks_own_recipe_is_the_tasks(tree, failure):
    engine = FakeEngine(build=failure)
    with pytest.raises(ImageBuildError):
        DockerRuntime(client=engine).prepare(tree)
    assert engine.builds == 1


def test_a_container_the_engine_cannot_start_is_an_error_retried_within_the_bound(tree):
    engine = FakeEngine(start=_api_error(500, "Internal Server Error: no such network"))
    result = DockerRuntime(client=engine, retries=1).run_trial(
        tree, "image", TrialRequest(label="probe.reward-file")
    )
    assert (result.status, result.infra_retries, engine.starts) == ("error", 1, 2)
    assert "no such network" in result.detail and result.reward is None
