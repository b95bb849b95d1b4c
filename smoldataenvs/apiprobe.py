"""What pandas and numpy offer where the task runs: run as a script inside the task
image (`python3 -c <this file>`), or imported here when no container is available.

Self-contained on purpose (standard library plus the libraries it inspects): it is
the source text that is sent into the image, so it must not import the project. It
prints one JSON object: each library's version, the public attribute names of the
objects a notebook reaches (module, DataFrame, Series, Index, GroupBy, accessors),
and pandas' registered option keys (`set_option` matches patterns against them).
"""

from __future__ import annotations

import importlib
import json
from typing import Any

# Dotted names inspected when importable; a missing one is simply absent.
TARGETS = {
    "pandas": "pandas",
    "pandas.DataFrame": "pandas:DataFrame",
    "pandas.Series": "pandas:Series",
    "pandas.Index": "pandas:Index",
    "pandas.DataFrameGroupBy": "pandas.core.groupby:DataFrameGroupBy",
    "pandas.SeriesGroupBy": "pandas.core.groupby:SeriesGroupBy",
    "pandas.Series.str": "pandas.core.strings.accessor:StringMethods",
    "pandas.Series.dt": "pandas.core.indexes.accessors:CombinedDatetimelikeProperties",
    "pandas.plotting": "pandas.plotting",
    "numpy": "numpy",
    "numpy.ndarray": "numpy:ndarray",
    "numpy.random": "numpy.random",
    "numpy.linalg": "numpy.linalg",
}


def _resolve(spec: str) -> Any:
    module_name, _, attribute = spec.partition(":")
    target: Any = importlib.import_module(module_name)
    return getattr(target, attribute) if attribute else target


def surface() -> dict[str, Any]:
    versions: dict[str, str] = {}
    names: dict[str, list[str]] = {}
    for library in ("pandas", "numpy"):
        try:
            versions[library] = importlib.import_module(library).__version__
        except ImportError:
            continue
    for key, spec in TARGETS.items():
        if key.split(".")[0] not in versions:
            continue
        try:
            target = _resolve(spec)
        except (ImportError, AttributeError):
            continue
        names[key] = sorted(n for n in dir(target) if not n.startswith("__"))
    options: list[str] = []
    if "pandas" in versions:
        try:
            registry = importlib.import_module("pandas._config.config")._registered_options
            options = sorted(registry)
        except (ImportError, AttributeError):
            options = []
    return {"versions": versions, "names": names, "options": options}


if __name__ == "__main__":
    print(json.dumps(surface(), sort_keys=True))
