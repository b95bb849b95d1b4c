"""rlenv recipe: does an installed optional distribution import on this Python?

Copied into a conda-translated image's `recipe/` (`swe_conda`) and run by the optional
step after each entry installs, inside the image build only, with the image's Python
(3.9+, the standard library only). A package of the instance's date can install and
still not import on the image's Python: pydap 3.2.2 (the newest on PyPI at 2022-10-25)
does `from collections import Mapping` (gone in 3.10) in `pydap.model`, reached from
`pydap.client`, while `import pydap` succeeds (its `__init__` is a namespace
declaration). xarray imports `pydap.client` at start-up and catches only
`ModuleNotFoundError`, so that one package stopped every test (measured on
pydata__xarray-6721, twice). So the check imports the distribution's top-level modules
and, one level down, each public submodule or subpackage of a top-level package, in
name order. A failure exits 1 with its line last (the step lists it and uninstalls
the entry). A module that merely needs one not installed (`ModuleNotFoundError`, or an
`ImportError` raised from one: dask's "install dask[array]" message) is no failure:
cfgrib's `cf2cdm` imports xarray, the repository, installed after this step. Nor is a
submodule's own error (`breaks`): the first build with submodules uninstalled
distributed, lxml and flox for modules made never to be imported alone.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
import time
from importlib import metadata

BUDGET_S = 120.0
"""Time for the submodules of one distribution; those left when it is spent are not
imported (said in the log). The step's `timeout 300` bounds the whole check."""
SKIPPED = frozenset({"__main__", "tests", "test", "testing", "testsuite", "conftest", "setup"})
"""Submodules never imported: `__main__` runs a program, a test package needs the
project's test dependencies, `setup` is a build script."""


def missing_module(exc: BaseException) -> str | None:
    """The name of the module whose absence `exc` is (or was raised from), else None."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ModuleNotFoundError):
            return seen.name or "?"
        seen = seen.__cause__ or seen.__context__
    return None


def top_level(dist: metadata.Distribution) -> list[str]:
    """The distribution's top-level import names: `top_level.txt`, else its files."""
    names = (dist.read_text("top_level.txt") or "").split()
    if not names:
        files = dist.files or ()
        names = sorted(
            {f.parts[0].removesuffix(".py") for f in files if len(f.parts) > 1 or f.suffix == ".py"}
        )
    return [n for n in names if n.isidentifier()]


def submodules(module: object) -> list[str]:
    """The public direct submodules and subpackages of a package, by name."""
    path = getattr(module, "__path__", None)
    if path is None:
        return []
    name = getattr(module, "__name__", "")
    found = {
        info.name
        for info in pkgutil.iter_modules(list(path))
        if info.name.isidentifier() and not info.name.startswith("_") and info.name not in SKIPPED
    }
    return [f"{name}.{sub}" for sub in sorted(found)]


BREAKS = (SyntaxError, AttributeError, NameError)
"""Errors that say a module's code does not fit this Python or the installed packages
(`collections.Mapping`, `np.float`, `async` as a name), besides an `ImportError` the
import system raises for a name missing from an installed module (its `name` is set)."""


def breaks(exc: BaseException) -> bool:
    """Whether a submodule's failure is a break of the package here, not a module made
    not to be imported alone: distributed's `distributed.bokeh` raises its own
    `ImportError("... has moved ...")` (no `name`), lxml's `usedoctest` a LookupError
    outside a doctest, a flox test helper pytest's `Skipped`."""
    if isinstance(exc, ImportError):
        return exc.name is not None
    return isinstance(exc, BREAKS)


def check(name: str, top: bool) -> bool:
    """Import `name`; True unless it fails for a reason other than a missing module (for
    a submodule, one that `breaks` the package)."""
    try:
        importlib.import_module(name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # any failure of the import is the answer
        needed = missing_module(exc)
        if needed is not None:
            print(f"import {name}: needs {needed}, not installed (kept)")
            return True
        if not top and not breaks(exc):
            print(f"import {name}: {type(exc).__name__}: {exc} (its own error, kept)")
            return True
        print(f"import {name}: {type(exc).__name__}: {exc}")
        return False
    return True


def main(argv: list[str]) -> int:
    """0 when the distribution named by the requirement `argv[1]` imports, else 1."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", argv[1] if len(argv) > 1 else "")
    if match is None:
        print("no distribution named")
        return 1
    dist = metadata.distribution(match.group(0))
    deadline = time.monotonic() + BUDGET_S
    for top in top_level(dist):
        if not check(top, top=True):
            return 1
        module = sys.modules.get(top)
        for sub in submodules(module):
            if time.monotonic() > deadline:
                print(f"import {sub} and after: not checked ({BUDGET_S:.0f} s spent)")
                return 0
            if not check(sub, top=False):
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
