"""The offline bases, one per Debian suite, and which one a spec's Python gets.

Where no registry serves `python:<version>-slim`, the only interpreters an offline
machine can have are Debian's: bullseye's 3.9, bookworm's 3.11 (the default base,
`settings.OFFLINE_BASE_IMAGE`) and trixie's 3.13, each built the same way
(`base_image.build_offline_image`, debootstrap from the host's Debian mirror). A
SWE-bench spec names the Python its instance was evaluated on (3.9 for most of
Verified: pytest 5.x's assertion rewriter and Sphinx 4's `from types import Union`
do not run on 3.11), so an instance task starts FROM the base whose Python is closest:

- the same minor version when a base has it (3.9, 3.11, 3.13);
- else the nearest minor version; at equal distance the newer one (3.10 -> 3.11,
  3.12 -> 3.13): the language only adds syntax a project of that Python may use
  (`match`, PEP 695), and the recipe's pip is dated no earlier than the image
  Python's release (`swe_recipe.PYTHON_RELEASED`), so wheels for it exist; so
  3.6, 3.7 and 3.8 -> 3.9, 3.14 and 3.15 -> 3.13;
- a Python 2, or a minor version more than `MAX_DISTANCE` away from every base
  (3.5 and older), is refused: `instance.python-unavailable`, a counted reason.

The difference is recorded in the task's provenance (`swe.recipe`: spec and image
Python) and the oracle decides whether the instance still runs there. Only the default
offline base is replaced: a base image the user chose (or the public one) is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from repo2rlenv.settings import OFFLINE_BASE_IMAGE

COMMON_PACKAGES = (
    "python3",
    "python-is-python3",
    "python3-pytest",
    "python3-numpy",
    "python3-pandas",
    "git",
    "ca-certificates",
)
"""Debian packages of every offline base (each exists in bullseye, bookworm and
trixie; python-is-python3 first appeared in bullseye)."""
NOT_IN_SPEC_ENVIRONMENTS = ("python3-pandas", "python3-numpy")
"""Packages of the bases (for notebook tasks) that no SWE-bench environment has: a
spec's recipe removes them before its own steps (`swe_recipe`), so numpy is the spec's,
from the index at the instance's date, or absent, as in the benchmark's environment.
Tests branch on it: SymPy 1.11's `test_lambdify.py::test_integral` printed `Integral`
for numpy and errored with Debian's numpy 1.19.5 beside it (sympy-23262, measured)."""
DATA_PACKAGES = (
    "python3-matplotlib",
    "python3-seaborn",
    "python3-scipy",
    "python3-sklearn",
    "python3-statsmodels",
    "python3-openpyxl",
)
"""The plotting and modelling libraries a notebook's reference may import
(`smoldataenvs.candidates.PINNED_PACKAGES`), from Debian as the rest of the base: an
offline base has no pip, so a task installing them at build time could not build.
openpyxl is `pd.read_excel`'s engine for `.xlsx` (bookworm's xlrd, 1.2, is older than
pandas accepts for `.xls`: such a task needs a base with pip)."""
OFFLINE_DATA_IMAGE = "rlenv-harvest/offline-python-data:bookworm-2"
"""The default base plus `DATA_PACKAGES`: the base of a notebook task whose reference
imports one of them (`sns.load_dataset`, `scipy.stats`), built the first time one does
(1.41 GB against the default's 388 MB, measured: scipy depends on pythran, which pulls
in a C++ compiler and Boost headers; no SWE task starts from it). `-2` added openpyxl."""
BASE_MODULES = frozenset({"pandas", "numpy"})
"""The Python modules every offline base has (`python3-pandas`, `python3-numpy`)."""
MAX_DISTANCE = 3
"""The furthest minor version a base stands in for (3.6 on the 3.9 base)."""
PYTHON_UNAVAILABLE = "instance.python-unavailable"


@dataclass(frozen=True)
class OfflineBase:
    suite: str
    python: str
    tag: str
    packages: tuple[str, ...] = COMMON_PACKAGES
    not_in_spec_environments: tuple[str, ...] = NOT_IN_SPEC_ENVIRONMENTS
    data: bool = False
    """A notebook base (`DATA_PACKAGES`), never chosen for a spec's Python."""


OFFLINE_BASES: dict[str, OfflineBase] = {
    base.tag: base
    for base in (
        OfflineBase("bullseye", "3.9", "rlenv-harvest/offline-python:bullseye-1"),
        OfflineBase("bookworm", "3.11", OFFLINE_BASE_IMAGE),
        OfflineBase("trixie", "3.13", "rlenv-harvest/offline-python:trixie-1"),
        OfflineBase(
            "bookworm", "3.11", OFFLINE_DATA_IMAGE, COMMON_PACKAGES + DATA_PACKAGES, data=True
        ),
    )
}


class PythonUnavailable(Exception):
    """No offline base has a Python close enough to the spec's."""


def offline_base_of(tag: str) -> OfflineBase | None:
    return OFFLINE_BASES.get(tag)


def _minor(version: str) -> tuple[int, int] | None:
    parts = version.strip().split(".")
    if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
        return None
    return int(parts[0]), int(parts[1])


def base_for_modules(base_image: str, modules: list[str]) -> str:
    """The image a notebook task imports `modules` on: the default offline base has no
    pip, so beyond pandas and numpy it is the data variant, which has the libraries from
    Debian (`DATA_PACKAGES`); any other base is kept (its pip installs what it lacks)."""
    beyond = set(modules) - BASE_MODULES
    return OFFLINE_DATA_IMAGE if base_image == OFFLINE_BASE_IMAGE and beyond else base_image


def choose_offline_base(spec_python: str | None, base_image: str) -> OfflineBase | None:
    """The offline base for a spec asking for `spec_python` when tasks start FROM
    `base_image`; None: keep `base_image` (not the default offline base, or the spec
    names no Python). Raises `PythonUnavailable` when no base is close enough."""
    if base_image != OFFLINE_BASE_IMAGE or not spec_python:
        return None
    wanted = _minor(spec_python)
    if wanted is None or wanted[0] != 3:
        raise PythonUnavailable(f"the spec's python {spec_python[:20]!r} is no Python 3 release")

    def distance(base: OfflineBase) -> tuple[int, int]:
        minor = _minor(base.python)
        assert minor is not None
        return abs(minor[1] - wanted[1]), -minor[1]  # nearest; at a tie the newer

    bases = [base for base in OFFLINE_BASES.values() if not base.data]
    best = min(bases, key=distance)
    if distance(best)[0] > MAX_DISTANCE:
        pythons = ", ".join(b.python for b in bases)
        raise PythonUnavailable(
            f"the spec's python {spec_python} is more than {MAX_DISTANCE} minor versions "
            f"from every offline base's ({pythons})"
        )
    return best
