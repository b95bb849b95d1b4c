"""The offline base an instance task starts FROM is the one whose Debian Python is
closest to its spec's (issue #26 point 4): 3.9 (bullseye), 3.11 (bookworm, the
default), 3.13 (trixie); other bases are built only when a task needs one."""

from __future__ import annotations

import shutil
import subprocess
from types import SimpleNamespace

import pytest

from repo2rlenv.kinds.common import Reject
from repo2rlenv.kinds.instance_deps import DependencyDate
from repo2rlenv.kinds.swe_specs import SweSpec
from repo2rlenv.runtime import base_image
from repo2rlenv.runtime.offline_bases import (
    OFFLINE_BASES,
    PYTHON_UNAVAILABLE,
    PythonUnavailable,
    choose_offline_base,
)
from repo2rlenv.settings import OFFLINE_BASE_IMAGE

BULLSEYE = "rlenv-harvest/offline-python:bullseye-1"
TRIXIE = "rlenv-harvest/offline-python:trixie-1"


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    ("spec_python", "tag"),
    [
        ("3.9", BULLSEYE),
        ("3.11", OFFLINE_BASE_IMAGE),
        ("3.13", TRIXIE),
        ("3.6", BULLSEYE),
        ("3.7", BULLSEYE),
        ("3.8", BULLSEYE),
        ("3.10", OFFLINE_BASE_IMAGE),  # a tie: the newer
        ("3.12", TRIXIE),  # a tie: the newer
        ("3.14", TRIXIE),
        ("3.9.18", BULLSEYE),
    ],
)
def test_the_closest_python_and_at_a_tie_the_newer(spec_python, tag):
    chosen = choose_offline_base(spec_python, OFFLINE_BASE_IMAGE)
    assert chosen is not None and chosen.tag == tag
    assert chosen is OFFLINE_BASES[tag]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("spec_python", ["2.7", "3.5", "3.17", "three", "3"])
def test_a_python_no_base_gives_is_refused(spec_python):
    with pytest.raises(PythonUnavailable):
        choose_offline_base(spec_python, OFFLINE_BASE_IMAGE)


@pytest.mark.timeout(30)
def test_a_chosen_or_public_base_and_a_spec_without_python_are_kept():
    assert choose_offline_base("3.9", "python:3.12-slim") is None
    assert choose_offline_base("3.9", BULLSEYE) is None  # the user's own choice
    assert choose_offline_base(None, OFFLINE_BASE_IMAGE) is None


@pytest.mark.timeout(30)
def test_the_recipe_runs_on_the_chosen_base_and_a_missing_python_is_a_reason():
    """On the default offline base, a 3.8 spec gets bullseye's 3.9: its pip is dated no
    earlier than 3.9's release (older build tools do not run on it), and the verifier
    pin is bookworm's; a Python 2 spec is a counted reason, not a crash."""
    from repo2rlenv.kinds import instance_wheels

    spec = SweSpec(repo="o/r", version="1.0", source="swebench 4.1.0", python="3.8")
    dated = DependencyDate(date="2019-03-01", basis="test")
    env = instance_wheels._recipe_environment(spec, {}, dated, OFFLINE_BASE_IMAGE, True)
    assert (env.base_image, env.image_python) == (BULLSEYE, "3.9")
    assert env.recipe is not None
    assert "ARG PIP_UPLOADED_PRIOR_TO=2020-10-06" in env.recipe.shared
    assert env.recipe.after[-1].endswith("pytest==7.2.1 pluggy==1.0.0 py==1.11.0")
    assert "python: spec 3.8, image 3.9" in env.wheels["wheels.txt"].decode()
    # the base's numpy and pandas (for notebooks) go before the spec's own steps
    removal = "RUN apt-get remove -y --purge python3-pandas python3-numpy"
    assert env.recipe.shared.index(removal) < env.recipe.shared.index(
        "ARG PIP_UPLOADED_PRIOR_TO=2020-10-06"
    )
    kept = instance_wheels._recipe_environment(spec, {}, dated, "img:1", True)
    assert kept.base_image is None and kept.image_python == instance_wheels.IMAGE_PYTHON
    assert kept.recipe is not None and not any("apt-get remove" in s for s in kept.recipe.shared)
    unnamed = spec.model_copy(update={"python": None})  # the default base, kept
    default = instance_wheels._recipe_environment(unnamed, {}, dated, OFFLINE_BASE_IMAGE, True)
    assert default.recipe is not None and removal in default.recipe.shared
    old = spec.model_copy(update={"python": "2.7"})
    with pytest.raises(Reject) as refused:
        instance_wheels._recipe_environment(old, {}, dated, OFFLINE_BASE_IMAGE, True)
    assert refused.value.reason == PYTHON_UNAVAILABLE


@pytest.mark.timeout(30)
def test_a_missing_base_is_built_once_and_only_an_offline_one(monkeypatch):
    """validate builds an offline base the first time a task starts FROM it (not
    `setup`); a present base, the public one or any other image is never built."""
    present = {OFFLINE_BASE_IMAGE}
    built: list[str] = []

    def build(client, log, tag=OFFLINE_BASE_IMAGE):
        built.append(tag)
        present.add(tag)

    monkeypatch.setattr(base_image, "image_present", lambda client, ref: ref in present)
    monkeypatch.setattr(base_image, "build_offline_image", build)
    monkeypatch.setattr(base_image, "trust_host_certificates", lambda *a, **k: True)
    dockerfile = f"FROM {BULLSEYE}\nRUN true\n"
    assert base_image.ensure_task_bases(object(), dockerfile, []) == [BULLSEYE]
    assert base_image.ensure_task_bases(object(), dockerfile, []) == []
    other = f"FROM {OFFLINE_BASE_IMAGE}\nFROM python:3.12-slim AS x\nFROM x\n"
    assert base_image.ensure_task_bases(object(), other, []) == []
    present.discard(OFFLINE_BASE_IMAGE)  # the default stays `setup`'s to build
    assert base_image.ensure_task_bases(object(), other, []) == []
    assert built == [BULLSEYE]


@pytest.mark.timeout(60)
def test_a_runtime_on_an_injected_engine_builds_no_base(monkeypatch):
    """A fake engine says every image is absent: the runtime must not start a real
    debootstrap for it (it did, in tests/test_docker_engine_failures.py)."""
    from repo2rlenv.runtime import docker_runtime

    called: list[str] = []
    monkeypatch.setattr(docker_runtime, "ensure_task_bases", lambda *a: called.append("x"))
    tree = SimpleNamespace(files={"environment/Dockerfile": (f"FROM {BULLSEYE}\n".encode(), False)})
    docker_runtime.DockerRuntime(client=object()).ensure_bases(tree)
    assert called == []
    runtime = docker_runtime.DockerRuntime()
    runtime._client = object()  # what `client` connects to itself
    runtime.ensure_bases(tree)
    assert called == ["x"]


def _debootstrap_missing() -> str | None:
    try:
        import docker

        docker.from_env(timeout=10).ping()
    except Exception as exc:
        return f"no Docker engine answers ({type(exc).__name__})"
    if shutil.which("debootstrap") is None:
        return "debootstrap is not installed"
    return None


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_bullseye_base_builds_and_has_python_3_9():
    """The real build (debootstrap from the host's Debian mirror, some 2 minutes here)
    under a test tag, then `python3 --version` in it."""
    missing = _debootstrap_missing()
    if missing:
        pytest.skip(missing)
    import docker

    client = docker.from_env(timeout=600)
    tag = "rlenv-harvest/test-offline-python:bullseye"
    log: list[str] = []
    try:
        base_image.build_offline_image(client, log, tag, base=OFFLINE_BASES[BULLSEYE])
        shown = client.containers.run(tag, ["python3", "--version"], remove=True)
        assert shown.decode().startswith("Python 3.9."), shown
        pythons = client.containers.run(tag, ["python", "--version"], remove=True)
        assert pythons.decode().startswith("Python 3.9."), pythons  # python-is-python3
        # pip 26 on 3.9 has no truststore: it is pointed at Debian's (the host's) bundle
        env = client.images.get(tag).attrs["Config"]["Env"]
        assert "PIP_CERT=/etc/ssl/certs/ca-certificates.crt" in env
    finally:
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, check=False)


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    ("install", "date"),
    [
        ("python -m pip install -e .", "2022-08-12"),
        ("python -m pip install --editable .[test]", "2022-08-12"),
        ("python -m pip install .", "2020-10-06"),
        ("python setup.py develop", "2020-10-06"),
    ],
)
def test_an_editable_install_is_dated_for_a_pep_660_setuptools(install, date):
    """pip 26 has no `setup.py develop` fallback: pytest 4.5's `pip install -e .` on
    the 3.9 base, dated 2020-10-06, got setuptools without `build_editable` and the
    build stopped; an editable install is dated no earlier than setuptools 64."""
    from repo2rlenv.kinds.swe_recipe import recipe_lines

    spec = SweSpec(repo="o/r", version="4.5", source="swebench 4.1.0", install=install)
    recipe = recipe_lines(spec, {}, "2019-05-14T21:54:55Z", "3.9")
    assert f"ARG PIP_UPLOADED_PRIOR_TO={date}" in recipe.shared


@pytest.mark.timeout(30)
def test_on_trixie_the_images_pip_goes_beside_debians():
    """trixie's Debian pip has no RECORD file: `pip install pip==26.0.1` stopped with
    `uninstall-no-record-file`; on 3.13 it is installed beside it, elsewhere as before."""
    from repo2rlenv.kinds.swe_recipe import IMAGE_PIP, recipe_lines

    spec = SweSpec(repo="o/r", version="1.0", source="swebench 4.1.0")
    trixie = recipe_lines(spec, {}, None, "3.13").shared
    assert f"RUN python3 -m pip install --ignore-installed {IMAGE_PIP}" in trixie
    for python in ("3.9", "3.11"):
        assert (
            f"RUN python3 -m pip install {IMAGE_PIP}" in recipe_lines(spec, {}, None, python).shared
        )


@pytest.mark.timeout(60)
def test_harbor_s_docker_environment_gets_the_missing_base_before_its_build(monkeypatch, tmp_path):
    """Harbor's local Docker environment builds FROM this engine's images: a task on the
    bullseye base is given its base before Harbor is asked to build (before, only the
    Docker runtime built it, and Harbor's build failed on the missing image)."""
    from repo2rlenv.runtime import docker_runtime, harbor_runtime
    from repo2rlenv.runtime.harbor_protocol import DriverReply

    order: list[str] = []
    monkeypatch.setattr(
        docker_runtime, "ensure_task_bases", lambda client, text, log: order.append(text)
    )
    monkeypatch.setattr(docker_runtime.docker, "from_env", lambda **k: object())

    def runtime_of(environment_type: str) -> harbor_runtime.HarborRuntime:
        """A Harbor runtime whose driver only records that it was asked to prepare."""
        runtime = harbor_runtime.HarborRuntime(environment_type)
        monkeypatch.setattr(runtime._copies, "copy", lambda task: str(tmp_path))
        monkeypatch.setattr(
            runtime,
            "_run_with_retries",
            lambda request, budget: (order.append(request.op), (DriverReply(status="ok"), 0))[1],
        )
        monkeypatch.setattr(runtime, "environment_key", lambda task: "k")
        return runtime

    tree = SimpleNamespace(
        name="t",
        files={"environment/Dockerfile": (f"FROM {BULLSEYE}\n".encode(), False)},
        config=SimpleNamespace(environment=SimpleNamespace(build_timeout_sec=60)),
    )
    runtime_of("docker").prepare(tree)
    assert order == [f"FROM {BULLSEYE}\n", "prepare"]
    # another Harbor environment (Modal, Daytona) builds elsewhere: nothing here
    order.clear()
    runtime_of("modal").prepare(tree)
    assert order == ["prepare"]


@pytest.mark.timeout(60)
def test_setup_tasks_builds_the_bases_harbor_would_miss(monkeypatch, tmp_path, capsys):
    """Harbor's own `harbor run -p TASKS` builds a task's Dockerfile with docker compose,
    which asks a registry for an absent offline base and fails offline; `setup --tasks`
    builds each absent offline base the tasks start FROM, once, and leaves other images
    (a public or multi-stage FROM) and the default base (setup's own) alone."""
    from repo2rlenv.cli import main
    from repo2rlenv.runtime import engine

    for name, base in (("a", BULLSEYE), ("b", BULLSEYE), ("c", "python:3.12-slim"),
                       ("d", OFFLINE_BASE_IMAGE)):  # fmt: skip
        (tmp_path / name / "environment").mkdir(parents=True)
        (tmp_path / name / "task.toml").write_text("")
        (tmp_path / name / "environment" / "Dockerfile").write_text(f"FROM {base}\nRUN true\n")
    present = {OFFLINE_BASE_IMAGE}
    built: list[str] = []

    def build(client, log, tag=OFFLINE_BASE_IMAGE):
        built.append(tag)
        present.add(tag)

    monkeypatch.setattr(engine, "ensure_engine", lambda log: "running")
    monkeypatch.setattr(base_image, "image_present", lambda client, ref: ref in present)
    monkeypatch.setattr(base_image, "build_offline_image", build)
    monkeypatch.setattr(base_image, "trust_host_certificates", lambda *a, **k: True)
    monkeypatch.setattr("repo2rlenv.runtime.images.image_present", lambda c, ref: ref in present)
    monkeypatch.setattr("docker.from_env", lambda **k: object())
    argv = ["setup", "--skip-base-image", "--tasks", str(tmp_path)]
    assert main(argv) == 0
    text = _said(capsys)
    assert built == [BULLSEYE]
    assert f"offline base {BULLSEYE}: built (2 tasks)" in text
    assert f"offline base {OFFLINE_BASE_IMAGE}: present (1 tasks)" in text
    assert "python:3.12-slim" not in text
    assert main(argv) == 0 and built == [BULLSEYE]  # a rerun builds nothing
    assert f"offline base {BULLSEYE}: present (2 tasks)" in _said(capsys)
    present.discard(OFFLINE_BASE_IMAGE)
    assert main(argv) == 0
    assert "absent: run setup without --skip-base-image" in _said(capsys)
    assert main(["setup", "--skip-base-image", "--tasks", str(tmp_path / "nope")]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["setup", "--skip-base-image", "--tasks", str(empty)]) == 2


def _said(capsys) -> str:
    """What the command printed, on either stream, with rich's line wrapping undone."""
    out = capsys.readouterr()
    return " ".join((out.out + out.err).split())
