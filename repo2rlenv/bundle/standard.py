"""The conventions every task this project generates shares, in one place.

- The agent works in `/workspace`; the start state is `environment/workspace/`.
- No network for the agent or the verifier.
- The verifier runs in a *separate* container started from the same image, receiving
  only `/workspace` from the agent (Harbor's `artifacts`), so files the agent planted
  elsewhere (site-packages, PATH, /logs) never reach it; Harbor's lint is satisfied.
- test.sh writes the failing score first, so a crash or a timeout scores 0, then runs
  a standard-library grader in isolated mode (`python3 -I`: no PYTHONPATH, no cwd on
  sys.path), and writes 1 only when it passes.
- Copies of visible tests the verifier restores live under `tests/protected/`.
"""

from __future__ import annotations

from repo2rlenv import __version__
from schemas import (
    AgentConfig,
    BundleFile,
    EnvironmentConfig,
    PackageInfo,
    Repo2RLEnvMetadata,
    SourceRef,
    TaskConfig,
    TaskKind,
    TaskMetadata,
    VerifierConfig,
)

WORKDIR = "/workspace"
TASK_ORG = "rlenv-harvest"

GRADING_TEST_SH = """#!/bin/bash
# Verifier written by rlenv-harvest. The failing score is written first, so a crash,
# a timeout or a missing workspace scores 0.
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
cd /workspace 2>/dev/null || exit 0
if python3 -I /tests/check.py; then
  echo 1 > /logs/verifier/reward.txt
fi
"""


def standard_config(
    task_id: str,
    *,
    kind: TaskKind,
    source: SourceRef,
    generator: str,
    description: str = "",
    agent_timeout: float = 600.0,
    verifier_timeout: float = 120.0,
    cpus: float = 1.0,
    memory_mb: int = 2048,
) -> TaskConfig:
    return TaskConfig(
        task=PackageInfo(name=f"{TASK_ORG}/{task_id}", description=description),
        metadata=TaskMetadata(
            repo2rlenv=Repo2RLEnvMetadata(
                generator=generator, generator_version=__version__, kind=kind, source=source
            )
        ),
        agent=AgentConfig(timeout_sec=agent_timeout),
        verifier=VerifierConfig(timeout_sec=verifier_timeout, environment_mode="separate"),
        environment=EnvironmentConfig(
            build_timeout_sec=600.0,
            cpus=cpus,
            memory_mb=memory_mb,
            network_mode="no-network",
            workdir=WORKDIR,
        ),
        artifacts=[WORKDIR],
    )


def workspace_dockerfile(base_image: str, has_files: bool) -> str:
    lines = [f"FROM {base_image}", f"WORKDIR {WORKDIR}"]
    if has_files:
        lines.append(f"COPY workspace/ {WORKDIR}/")
    return "\n".join(lines) + "\n"


def environment_files(base_image: str, workspace: dict[str, str | bytes]) -> list[BundleFile]:
    """The Dockerfile plus the start state under environment/workspace/."""
    files = [
        BundleFile(
            path="environment/Dockerfile",
            content=workspace_dockerfile(base_image, bool(workspace)).encode(),
        )
    ]
    for rel, content in sorted(workspace.items()):
        data = content.encode() if isinstance(content, str) else content
        files.append(BundleFile(path=f"environment/workspace/{rel}", content=data))
    return files


def grading_files(check_py: str, protected: dict[str, str] | None = None) -> list[BundleFile]:
    files = [
        BundleFile(path="tests/test.sh", content=GRADING_TEST_SH.encode(), executable=True),
        BundleFile(path="tests/check.py", content=check_py.encode()),
    ]
    for rel, content in sorted((protected or {}).items()):
        files.append(BundleFile(path=f"tests/protected/{rel}", content=content.encode()))
    return files


def solution_files(solve_sh: str) -> list[BundleFile]:
    return [BundleFile(path="solution/solve.sh", content=solve_sh.encode(), executable=True)]
