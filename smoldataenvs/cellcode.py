"""A cell's source as Python: IPython syntax set aside, Python 2 recognised, and the
calls that make a result irreproducible offline (network, unseeded randomness, clock).

Magic (`%`) and shell (`!`) lines are replaced by `pass` so the rest of a cell can be
parsed and sliced; the cell remembers them, because an answer cell that needs them
cannot be re-run as plain Python.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from smoldataenvs.seaborn_data import dataset_loads

_MAGIC_LINE = re.compile(r"^\s*(?:[%!]|[\w, ]+=\s*[%!](?!=)|[\w.]+\?{1,2}\s*$)")
_PY2 = re.compile(
    r"^\s*print\s+[^\s(=][^=]*$|^\s*exec\s+[\"']|except\s+[\w.]+\s*,\s*\w+\s*:|\bur[\"']"
    r"|^\s*raise\s+\w+\s*,",
    re.MULTILINE,
)
NETWORK_CALLS = {
    "load_dataset",
    "urlopen",
    "urlretrieve",
    "fetch_openml",
    "read_html",
    "download",
    "get_file",
    "snapshot_download",
    "hf_hub_download",
    "DataReader",
}
NETWORK_MODULES = {"requests", "urllib", "httpx", "aiohttp", "kaggle", "gdown", "wget", "yfinance"}
SEED_CALLS = {"seed", "manual_seed", "set_seed"}
GENERATORS = {"default_rng", "RandomState", "Generator"}
CLOCK_CALLS = {("datetime", "now"), ("datetime", "today"), ("date", "today"), ("time", "time")}
CLOCK_CALLS |= {("Timestamp", "now"), ("Timestamp", "today"), ("time", "perf_counter")}


@dataclass
class ParsedCell:
    index: int
    source: str
    sanitized: str = ""
    tree: ast.Module | None = None
    magics: list[str] = field(default_factory=list)
    error: str | None = None
    detail: str = ""

    @property
    def has_magic(self) -> bool:
        return any(re.match(r"^\s*(?:%|[\w, ]+=\s*%)|.*\?$", m) for m in self.magics)

    @property
    def has_shell(self) -> bool:
        return any(re.match(r"^\s*(?:!|[\w, ]+=\s*!)", m) for m in self.magics)


def sanitize(source: str) -> tuple[str, list[str]]:
    """Source with IPython-only lines replaced by `pass` (same indentation, same line
    numbers, so statement positions still match the notebook) and the lines replaced."""
    magics: list[str] = []
    out: list[str] = []
    continuing = False
    for line in source.splitlines():
        if continuing or _MAGIC_LINE.match(line):
            magics.append(line)
            indent = re.match(r"\s*", line).group(0)
            out.append("" if continuing else f"{indent}pass")
            continuing = line.rstrip().endswith("\\")
        else:
            out.append(line)
    return "\n".join(out), magics


def parse_cell(index: int, source: str) -> ParsedCell:
    cell = ParsedCell(index=index, source=source)
    if source.lstrip().startswith("%%"):
        first = source.lstrip().splitlines()[0]
        cell.error, cell.detail, cell.magics = "cell.cell-magic", first[:60], [first]
        return cell
    cell.sanitized, cell.magics = sanitize(source)
    try:
        cell.tree = ast.parse(cell.sanitized)
    except (SyntaxError, ValueError, RecursionError) as exc:
        python2 = _PY2.search(cell.sanitized)
        cell.error = "code.python2" if python2 else "code.syntax-error"
        cell.detail = (python2.group(0).strip() if python2 else str(exc))[:80]
    return cell


def call_chain(node: ast.AST) -> list[str]:
    """`np.random.rand` -> ['np', 'random', 'rand']; a subscript or call root gives its
    chain from the root name."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            return list(reversed(parts))
        else:
            return list(reversed(parts))


def _kw(call: ast.Call, name: str) -> bool:
    return any(k.arg == name for k in call.keywords)


def hazards(statements: list[ast.stmt]) -> list[tuple[str, str]]:
    """(reason, detail) for every reason the statements cannot be re-run offline and
    deterministically; empty when they can."""
    calls = [n for s in statements for n in ast.walk(s) if isinstance(n, ast.Call)]
    # seaborn's example datasets are read from a local copy or refused by the data
    # plan (`seaborn_data`), not here: the same name as `datasets.load_dataset`.
    offline = {id(call) for call, _ in dataset_loads(statements)}
    seeded = any(call_chain(c.func)[-1:] and call_chain(c.func)[-1] in SEED_CALLS for c in calls)
    found: list[tuple[str, str]] = []
    for call in calls:
        chain = call_chain(call.func)
        if not chain:
            continue
        name, dotted = chain[-1], ".".join(chain)
        if id(call) in offline:
            continue
        if name in NETWORK_CALLS or chain[0] in NETWORK_MODULES:
            found.append(("code.network", dotted))
        elif name in GENERATORS and not call.args and not _kw(call, "seed"):
            found.append(("code.random-unseeded", f"{dotted}() without a seed"))
        elif "random" in chain[:-1] and name not in SEED_CALLS | GENERATORS and not seeded:
            found.append(("code.random-unseeded", dotted))
        elif name in ("sample", "train_test_split", "shuffle") and not (
            _kw(call, "random_state") or seeded
        ):
            found.append(("code.random-unseeded", f"{dotted} without random_state"))
        elif tuple(chain[-2:]) in CLOCK_CALLS:
            found.append(("code.clock", dotted))
    imports = [
        alias.name.split(".")[0]
        for s in statements
        for n in ast.walk(s)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for alias in (n.names if isinstance(n, ast.Import) else [ast.alias(n.module or "")])
    ]
    for module in imports:
        if module in NETWORK_MODULES:
            found.append(("code.network", f"import {module}"))
    return found


def imported_modules(statements: list[ast.stmt]) -> set[str]:
    modules: set[str] = set()
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Import):
                modules.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules.add(node.module.split(".")[0])
    return modules
