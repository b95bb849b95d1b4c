"""seaborn's example datasets, read offline: `titanic = sns.load_dataset('titanic')`.

Tutorials load their data this way more than any other (the Python Data Science
Handbook's `planets` and `titanic`, countless `tips`, `iris` and `penguins`
notebooks). seaborn downloads `<name>.csv` from the mwaskom/seaborn-data repository
unless its cache folder already holds that file, then prepares some datasets its own
way (titanic's ordered `class` and `deck`, tips' categorical `day`). So the call is kept
as the notebook wrote it: the task ships the file as `seaborn-data/<name>.csv` in
/workspace and its image sets `SEABORN_DATA` to that folder, and seaborn's own loader
reads the copy and prepares it as it did for the notebook, with no network (the agent
may load it the same way). The copy is found by file name like any other data file:
in the notebook's folder or a `--data-dir` (a checkout of mwaskom/seaborn-data). A call
that reads elsewhere (`cache=False`, `data_home=`), or whose name is not one literal
word, stays a network read.
"""

from __future__ import annotations

import ast
import re

SEABORN_DIR = "seaborn-data"
"""Where the copies go in the task's /workspace."""
SEABORN_ENV = {"SEABORN_DATA": f"/workspace/{SEABORN_DIR}"}
"""seaborn's cache folder, set in the image of a task that reads one of its datasets."""
LOADER = "load_dataset"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def seaborn_names(statements: list[ast.stmt]) -> tuple[set[str], set[str]]:
    """(the names seaborn is imported as, the names its `load_dataset` is imported as:
    itself only; `from seaborn import load_dataset as ld` is left alone, since a
    describer reads a call as a dataset load by the function's name)."""
    modules: set[str] = set()
    loaders: set[str] = set()
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Import):
                modules.update(a.asname or a.name for a in node.names if a.name == "seaborn")
            elif isinstance(node, ast.ImportFrom) and node.module == "seaborn" and not node.level:
                loaders.update(a.name for a in node.names if a.name == LOADER and not a.asname)
    return modules, loaders


def dataset_loads(statements: list[ast.stmt]) -> list[tuple[ast.Call, str | None]]:
    """Each call of seaborn's `load_dataset` in `statements`, with the dataset it names
    (None when the name is not one literal word or an option reads elsewhere)."""
    modules, loaders = seaborn_names(statements)
    found: list[tuple[ast.Call, str | None]] = []
    for statement in statements:
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            by_module = (
                isinstance(func, ast.Attribute)
                and func.attr == LOADER
                and isinstance(func.value, ast.Name)
                and func.value.id in modules
            )
            if by_module or (isinstance(func, ast.Name) and func.id in loaders):
                found.append((node, loaded_name(node)))
    return found


def loaded_name(call: ast.Call) -> str | None:
    """`titanic` for `<anything>.load_dataset('titanic')` or `load_dataset('titanic')`
    read from seaborn's cache folder; None otherwise. `cache=True` (the default) is
    kept; `cache=False` (always download) or a `data_home` is not a read of the shipped
    copy. Other keywords go on to `pd.read_csv` (`index_col=0`): the describer states
    them as it states a `read_csv` call's, or refuses the question. Which calls are
    seaborn's is `dataset_loads`' question; a describer asks only of calls whose
    reference the data plan holds."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name != LOADER or len(call.args) != 1:
        return None
    first = call.args[0]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg == "data_home":
            return None  # `**options` could say anything; another folder is not ours
        cached = isinstance(keyword.value, ast.Constant) and keyword.value.value is True
        if keyword.arg == "cache" and not cached:
            return None
    return first.value if _NAME.match(first.value) else None


def load_reference(name: str) -> str:
    """How a task records the dataset it read (`referenced_as`), and the data plan's key
    the describer looks the copy up by."""
    return f"seaborn.load_dataset({name!r})"


def data_file_name(name: str) -> str:
    return f"{name}.csv"
