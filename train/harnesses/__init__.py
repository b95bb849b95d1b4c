"""Real coding harnesses (pi, opencode, Hermes) as rollout runners.

`profile` says what a harness declares (pinned packages, config files, command line,
tool-call counting); `registry` lists the harnesses by name. `install` caches the
bundles on the host, `layer` puts one on top of a task image, `trial` runs it in a
container and verifies the workspace like `validate`, `runner.build_runner` ties it to
the guard and the reward. `python -m train.harnesses install [NAME...]` preinstalls.
"""

from train.harnesses.profile import HarnessProfile, RunSettings
from train.harnesses.registry import get_profile, profiles
from train.harnesses.runner import GuardEndpoint, HarnessRunner, RunnerOptions, build_runner

__all__ = [
    "GuardEndpoint",
    "HarnessProfile",
    "HarnessRunner",
    "RunSettings",
    "RunnerOptions",
    "build_runner",
    "get_profile",
    "profiles",
]
