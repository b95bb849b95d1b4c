"""The pytest a task's verifier runs, per base image: one table for everything that
resolves an instance's environment around it.

The verifier uses the image's pytest when it has one (the offline image: Debian
bookworm's 7.2.1 with pluggy 1.0.0) and installs `PYTEST_PIN` otherwise
(`common.PYTEST_INSTALL`). What is resolved for an instance must load under it:

- a SWE-bench spec's recipe installs that pin last, over the spec's own pytest, and
  dates its pip no earlier than the pin's release (`instance_wheels`);
- a checkout's test requirements files are resolved under upper bounds of pytest and
  pluggy when they name a pytest plugin (`requirement_files.verifier_bounds`): against
  the newest pytest, moto's pytest-cov was 7.1, whose `wrapper=True` hooks need pluggy
  1.2, and pytest 7.2.1 stopped at start-up.

`released` is the day after the pytest pin's release (pip's `--uploaded-prior-to` is
exclusive): an environment is taken as the index offered it at the instance's date,
but never before the verifier's pytest existed, else no resolution meets the date and
the newest of everything is taken (NumPy 2 for pvlib's tests of 2022, which use
`np.Inf`).
"""

from __future__ import annotations

from dataclasses import dataclass

from repo2rlenv.settings import OFFLINE_BASE_IMAGE

PYTEST_PIN = "pytest==8.3.4"
"""What the verifier installs in an image without pytest."""


@dataclass(frozen=True)
class VerifierPytest:
    pins: tuple[str, ...]
    """`pytest==V` first, then what comes with it in the image (`pluggy==V`)."""
    released: str
    """ISO date, the day after pytest V's release."""

    @property
    def pytest(self) -> str:
        return self.pins[0]


VERIFIER_PYTEST: dict[str, VerifierPytest] = {
    OFFLINE_BASE_IMAGE: VerifierPytest(("pytest==7.2.1", "pluggy==1.0.0"), "2023-01-15"),
    # bullseye's base (Python 3.9, Debian's pytest 6.0.2, pluggy 0.13, py 1.10): a
    # recipe installs bookworm's three (pytest 7.2.1 runs on 3.7+), so node ids read the
    # same way; pytest 7.2 ships a `py.py` shim without `py.io`, which the real `py`
    # package shadows on bookworm (pylint's pytest-benchmark 3.4 needs `py.io`).
    # trixie's (3.13) is not listed and gets `PYTEST_PIN`, which runs on it
    "rlenv-harvest/offline-python:bullseye-1": VerifierPytest(
        ("pytest==7.2.1", "pluggy==1.0.0", "py==1.11.0"), "2023-01-15"
    ),
}
DEFAULT_VERIFIER_PYTEST = VerifierPytest((PYTEST_PIN,), "2024-12-02")


def verifier_pytest(base_image: str) -> VerifierPytest:
    """The verifier's pytest in `base_image` (a base image not in the table gets
    `PYTEST_PIN`, which the verifier installs)."""
    return VERIFIER_PYTEST.get(base_image, DEFAULT_VERIFIER_PYTEST)
