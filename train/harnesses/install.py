"""Harness bundles: each profile's pinned packages, installed once on the host into a
cache folder that the image layer copies in.

A bundle's folder is named after a hash of what it holds (installer, pins, target
Python), so a new pin is a new folder and an old one is never modified. Installs run
in a scratch folder beside it and are renamed into place, under an exclusive file lock,
so concurrent trainers (threads or processes) install once and never see half a
bundle. A registry that cannot be reached is reported as such, with a reason code.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from repo2rlenv.settings import load_settings
from train.harnesses.profile import HarnessProfile

COMPLETE = ".rlenv-complete"
LAYER_DOCKERFILE = ".rlenv-layer.Dockerfile"
TARGET_PYTHON = "3.11"
"""The task images' interpreter (Debian 12's python3): pip bundles are built for it."""
TARGET_PLATFORM = "manylinux2014_x86_64"
INSTALL_TIMEOUT_S = 900.0
_NETWORK_MARKERS = (
    "ENOTFOUND",
    "EAI_AGAIN",
    "ECONNREFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "ENETUNREACH",
    "network request to",
    "Failed to establish a new connection",
    "Max retries exceeded",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "Connection refused",
    "Read timed out",
)


class HarnessInstallError(RuntimeError):
    """A bundle that could not be installed; `reason` is a stable code."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def default_cache_dir() -> Path:
    """Where bundles live unless a caller names a folder: the `harness_dir` setting."""
    return load_settings().harness_bundles


def bundle_key(profile: HarnessProfile) -> str:
    spec = "\0".join(
        (profile.name, profile.installer, TARGET_PYTHON, *profile.install_flags, *profile.packages)
    )
    return hashlib.sha256(spec.encode()).hexdigest()[:16]


def bundle_path(profile: HarnessProfile, cache_dir: Path | None = None) -> Path:
    return (cache_dir or default_cache_dir()) / f"{profile.name}-{bundle_key(profile)}"


def install_command(profile: HarnessProfile, dest: Path) -> list[str]:
    if profile.installer == "npm":
        return [
            "npm",
            "install",
            "--prefix",
            str(dest),
            "--no-audit",
            "--no-fund",
            "--no-update-notifier",
            "--omit=dev",
            *profile.install_flags,
            *profile.packages,
        ]
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-compile",
        "--target",
        str(dest),
        "--only-binary=:all:",
        "--python-version",
        TARGET_PYTHON,
        "--implementation",
        "cp",
        "--platform",
        TARGET_PLATFORM,
        *profile.install_flags,
        *profile.packages,
    ]


def layer_dockerfile(profile: HarnessProfile) -> str:
    """The harness layer, on top of any task image (passed as the BASE build argument)."""
    return f"ARG BASE\nFROM ${{BASE}}\nCOPY . {profile.bundle_dir}/\n"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def is_installed(profile: HarnessProfile, cache_dir: Path | None = None) -> bool:
    return (bundle_path(profile, cache_dir) / COMPLETE).is_file()


def ensure_bundle(profile: HarnessProfile, cache_dir: Path | None = None) -> Path:
    """The bundle folder for `profile`, installing it first when absent."""
    dest = bundle_path(profile, cache_dir)
    if (dest / COMPLETE).is_file():
        return dest
    with _locked(dest.with_name(dest.name + ".lock")):
        if (dest / COMPLETE).is_file():
            return dest
        scratch = dest.with_name(f"{dest.name}.tmp-{os.getpid()}")
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        try:
            _run(install_command(profile, scratch), profile)
            (scratch / LAYER_DOCKERFILE).write_text(layer_dockerfile(profile))
            (scratch / ".dockerignore").write_text(
                f"{LAYER_DOCKERFILE}\n{COMPLETE}\n.dockerignore\n"
            )
            (scratch / COMPLETE).write_text("\n".join(profile.packages) + "\n")
            shutil.rmtree(dest, ignore_errors=True)
            scratch.rename(dest)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return dest


def _run(command: list[str], profile: HarnessProfile) -> None:
    tool = command[0]
    if shutil.which(tool) is None and not Path(tool).is_file():
        raise HarnessInstallError(
            f"install.{profile.installer}-missing",
            f"{tool} is not installed: it is needed to install the {profile.name} harness",
        )
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise HarnessInstallError(
            "install.timeout",
            f"installing {profile.name} ({' '.join(profile.packages)}) took over "
            f"{INSTALL_TIMEOUT_S:g}s",
        ) from exc
    if done.returncode == 0:
        return
    output = (done.stdout + "\n" + done.stderr).strip()
    registry = "the npm registry" if profile.installer == "npm" else "PyPI"
    if any(marker in output for marker in _NETWORK_MARKERS):
        raise HarnessInstallError(
            "install.registry-unreachable",
            f"cannot reach {registry} to install {profile.name} "
            f"({' '.join(profile.packages)}); check the network or proxy settings, or "
            f"preinstall the bundles with `make harnesses` where the registry is reachable."
            f"\n{output[-800:]}",
        )
    raise HarnessInstallError(
        "install.failed",
        f"installing {profile.name} ({' '.join(profile.packages)}) failed "
        f"(exit {done.returncode}):\n{output[-1500:]}",
    )
