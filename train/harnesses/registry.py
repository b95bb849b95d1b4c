"""The harness profiles, by name: the one place a harness is registered.

A new harness is a small module with a `HarnessProfile` subclass plus one entry here
(and its tests: `tests/train/test_harnesses.py` checks every entry).
"""

from __future__ import annotations

from train.harnesses.hermes import Hermes
from train.harnesses.opencode import OpenCode
from train.harnesses.pi import Pi
from train.harnesses.profile import HarnessProfile, UnknownHarnessError

PROFILES: dict[str, HarnessProfile] = {
    profile.name: profile for profile in (Pi(), OpenCode(), Hermes())
}


def get_profile(name: str) -> HarnessProfile:
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise UnknownHarnessError(f"no harness profile {name!r} (known: {known})") from None


def profiles() -> dict[str, HarnessProfile]:
    return dict(PROFILES)
