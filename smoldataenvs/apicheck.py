"""Refuse a reference that calls pandas/numpy API the task image does not have, before
any container runs: `.ix`, `DataFrame.as_matrix`, `sort()` on a frame,
`pd.set_option('html', False)`, `np.float`...

No hand-written list of removed names: the names come from `ApiSurface`, which is the
output of `apiprobe` run against the libraries installed in the task image (or, with
no container engine, on this machine; the versions checked are recorded either way).
The check is deliberately one-sided: it only refuses names it can tie to pandas or
numpy and that are absent there, so unknown objects, column attributes (`df.Goals`)
and anything dynamic pass, and the container re-run stays the final judge.
"""

from __future__ import annotations

import ast
import re

from pydantic import BaseModel, ConfigDict, Field

FRAME_KEYS = ("pandas.DataFrame", "pandas.Series")
ACCESSORS = {"str": "pandas.Series.str", "dt": "pandas.Series.dt"}
OPTION_FUNCTIONS = {"set_option", "get_option", "reset_option", "describe_option"}


class ApiSurface(BaseModel):
    """`apiprobe.surface()` as read back: versions, public names, option keys."""

    model_config = ConfigDict(extra="forbid")

    versions: dict[str, str]
    names: dict[str, list[str]]
    options: list[str] = Field(default_factory=list)

    def has(self, key: str) -> bool:
        return key in self.names

    def offers(self, keys: tuple[str, ...], attribute: str) -> bool:
        return any(attribute in self.names.get(key, ()) for key in keys)

    def label(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(self.versions.items()))


def _root(node: ast.AST) -> ast.Name | None:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node if isinstance(node, ast.Name) else None


class ApiChecker:
    """One slice's statements against one surface."""

    def __init__(self, surface: ApiSurface, columns: set[str]) -> None:
        self.surface = surface
        self.columns = columns
        self.modules: dict[str, str] = {}  # local name -> "pandas" / "numpy"
        self.frames: set[str] = set()  # names bound to a pandas object

    def missing(self, statements: list[ast.stmt]) -> str | None:
        """Why the statements cannot run on the surface's libraries, or None."""
        known = self.columns | {
            n.value
            for s in statements
            for n in ast.walk(s)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        }
        for statement in statements:
            self._bind(statement)
            for node in ast.walk(statement):
                why = self._node(node, known)
                if why:
                    return why
        return None

    # -- which names are pandas / numpy objects --------------------------------------
    def _bind(self, statement: ast.stmt) -> None:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name in ("pandas", "numpy"):
                    self.modules[alias.asname or alias.name] = alias.name
        elif isinstance(statement, ast.Assign):
            pandas_value = self._is_pandas(statement.value)
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    (self.frames.add if pandas_value else self.frames.discard)(target.id)

    def _is_pandas(self, node: ast.AST) -> bool:
        """An expression whose value is a pandas object: built by `pd.<f>(...)` or
        derived from a name that holds one (a subscript, attribute or method result)."""
        root = _root(node)
        if root is None:
            return False
        if root.id in self.frames:
            return True
        calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
        return self.modules.get(root.id) == "pandas" and bool(calls)

    def _frame_or_column(self, node: ast.AST, known: set[str]) -> bool:
        """Certainly a DataFrame or Series: a frame's name, `df['col']` / `df[['a']]`,
        or `df.col` for a column name; not a method result (an Index, a GroupBy, an
        array or a scalar), which the check leaves alone."""
        if isinstance(node, ast.Name):
            return node.id in self.frames
        if isinstance(node, ast.Subscript):
            key = node.slice
            column = isinstance(key, ast.Constant) and isinstance(key.value, str)
            return (column or isinstance(key, ast.List)) and self._frame_or_column(
                node.value, known
            )
        if isinstance(node, ast.Attribute):
            return node.attr in known and self._frame_or_column(node.value, known)
        return False

    # -- checks --------------------------------------------------------------------
    def _node(self, node: ast.AST, known: set[str]) -> str | None:
        if isinstance(node, ast.ImportFrom) and node.module in ("pandas", "numpy"):
            for alias in node.names:
                if alias.name != "*" and not self.surface.offers((node.module,), alias.name):
                    return self._gone(f"{node.module}.{alias.name}", node.module)
        if isinstance(node, ast.Call):
            return self._option(node)
        if not isinstance(node, ast.Attribute) or not isinstance(node.ctx, ast.Load):
            return None
        owner, attribute = node.value, node.attr
        if isinstance(owner, ast.Name) and owner.id in self.modules:
            module = self.modules[owner.id]
            if self.surface.has(module) and not self.surface.offers((module,), attribute):
                return self._gone(f"{module}.{attribute}", module)
            return None
        if (
            isinstance(owner, ast.Attribute)
            and isinstance(owner.value, ast.Name)
            and owner.value.id in self.modules
        ):
            key = f"{self.modules[owner.value.id]}.{owner.attr}"
            if self.surface.has(key) and not self.surface.offers((key,), attribute):
                return self._gone(f"{key}.{attribute}", key.split(".")[0])
            return None
        if isinstance(owner, ast.Attribute) and owner.attr in ACCESSORS:
            key = ACCESSORS[owner.attr]
            if (
                self._is_pandas(owner.value)
                and self.surface.has(key)
                and not self.surface.offers((key,), attribute)
            ):
                return self._gone(f"Series.{owner.attr}.{attribute}", "pandas")
            return None
        if attribute in known or not self._frame_or_column(owner, known):
            return None
        if all(self.surface.has(k) for k in FRAME_KEYS) and not self.surface.offers(
            FRAME_KEYS, attribute
        ):
            return self._gone(f"DataFrame/Series.{attribute}", "pandas")
        return None

    def _option(self, call: ast.Call) -> str | None:
        """`pd.set_option(pattern, value, ...)`: pandas matches the pattern against its
        registered keys (exactly, else as a case-insensitive regex) and refuses a
        pattern that matches no key or, for set/get, several."""
        func = call.func
        if not (
            isinstance(func, ast.Attribute)
            and func.attr in OPTION_FUNCTIONS
            and isinstance(func.value, ast.Name)
            and self.modules.get(func.value.id) == "pandas"
            and self.surface.options
        ):
            return None
        patterns = call.args[::2] if func.attr == "set_option" else call.args[:1]
        for pattern in patterns:
            if not (isinstance(pattern, ast.Constant) and isinstance(pattern.value, str)):
                continue
            text = pattern.value
            if text in self.surface.options or (text == "all" and func.attr != "set_option"):
                continue
            try:
                matched = [k for k in self.surface.options if re.search(text, k, re.IGNORECASE)]
            except re.error:
                matched = []
            if not matched or (len(matched) > 1 and func.attr in ("set_option", "get_option")):
                found = f"{len(matched)} option keys" if matched else "no option key"
                return (
                    f"pd.{func.attr}({text!r}) matches {found} in "
                    f"pandas {self.surface.versions.get('pandas', '?')}"
                )
        return None

    def _gone(self, name: str, library: str) -> str:
        version = self.surface.versions.get(library, "?")
        return f"{name} does not exist in {library} {version}"
