"""What hidden tests expect of the code, stated in the instruction so the task is fair:
the modules they import and the names they take from them."""

from __future__ import annotations

import ast
import posixpath

from repo2rlenv.pysource import parse_python


def _imports(source: str) -> dict[str, set[str]]:
    tree = parse_python(source)
    if tree is None:
        return {}
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.setdefault(node.module, set()).update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found.setdefault(alias.name, set())
    return found


def interface_note(hidden: dict[str, str], code: dict[str, str]) -> str:
    modules = {posixpath.splitext(p)[0].replace("/", "."): p for p in code if p.endswith(".py")}
    modules.update({k.rsplit(".", 1)[-1]: v for k, v in list(modules.items())})
    lines = []
    seen: dict[str, set[str]] = {}
    for source in hidden.values():
        for module, names in _imports(source).items():
            if module in modules:
                seen.setdefault(module, set()).update(names)
    for module, names in sorted(seen.items()):
        shown = ", ".join(f"`{n}`" for n in sorted(names) if n != "*")
        where = f"`{modules[module]}`"
        lines.append(f"- module `{module}` ({where})" + (f" providing {shown}" if shown else ""))
    if not lines:
        return "Work in the current folder (/workspace)."
    return "Work in the current folder (/workspace). Hidden tests will import:\n" + "\n".join(lines)
