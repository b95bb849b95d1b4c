"""Reading one `.ipynb` into plain cells, or refusing it with a stable reason.

Real notebooks are messy (sources as lists or strings, outputs missing, nbformat 3,
Python 2 kernels, multi-megabyte PNG outputs), so this reader trusts nothing and never
raises anything but `NotebookError`, whose `reason` is counted in the yield table.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smoldataenvs.skips import SkipError

MAX_NOTEBOOK_BYTES = 50 * 1024 * 1024
IMAGE_PREFIX = "image/"


class NotebookError(SkipError):
    """A notebook file that cannot be read."""


@dataclass(frozen=True)
class Output:
    """One saved output. `text` is the stream text or the `text/plain` of a result."""

    kind: str
    text: str
    mimes: tuple[str, ...] = ()
    name: str = ""
    html: str = ""
    """The `text/html` of a result: a DataFrame's table, read by the table rung."""

    @property
    def is_image(self) -> bool:
        return any(m.startswith(IMAGE_PREFIX) for m in self.mimes)


@dataclass(frozen=True)
class Cell:
    index: int
    cell_type: str
    source: str
    outputs: tuple[Output, ...] = ()


@dataclass(frozen=True)
class Notebook:
    path: Path
    record_id: str
    cells: tuple[Cell, ...]
    sha256: str
    kernel: str

    @property
    def code_cells(self) -> list[Cell]:
        return [c for c in self.cells if c.cell_type == "code"]

    def markdown_before(self, index: int) -> str:
        """The markdown directly above cell `index` (stops at the previous code cell)."""
        parts: list[str] = []
        for cell in reversed(self.cells[:index]):
            if cell.cell_type == "code":
                break
            if cell.cell_type == "markdown" and cell.source.strip():
                parts.append(cell.source.strip())
        return "\n\n".join(reversed(parts))


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def _output(raw: Any) -> Output | None:
    if not isinstance(raw, dict):
        return None
    kind = raw.get("output_type")
    if kind == "stream":
        return Output(kind="stream", text=_text(raw.get("text")), name=str(raw.get("name", "")))
    if kind in ("execute_result", "display_data", "pyout"):
        data = raw.get("data") if isinstance(raw.get("data"), dict) else {}
        return Output(
            kind="execute_result" if kind == "pyout" else kind,
            text=_text(data.get("text/plain")),
            mimes=tuple(sorted(str(k) for k in data)),
            html=_text(data.get("text/html")),
        )
    if kind in ("error", "pyerr"):
        return Output(kind="error", text=f"{raw.get('ename', '')}: {raw.get('evalue', '')}")
    return None


def _kernel(metadata: dict[str, Any]) -> str:
    spec = metadata.get("kernelspec") if isinstance(metadata.get("kernelspec"), dict) else {}
    info = metadata.get("language_info") if isinstance(metadata.get("language_info"), dict) else {}
    language = str(spec.get("language") or info.get("name") or "python").lower()
    version = str(info.get("version", ""))
    name = f"{spec.get('name', '')} {spec.get('display_name', '')}".lower()
    lexer = str(info.get("pygments_lexer", ""))
    if language != "python":
        return language
    if version.startswith("2.") or "python2" in name or "python 2" in name or lexer == "ipython2":
        return "python2"
    return "python3"


def _upgrade_v3(data: dict[str, Any]) -> dict[str, Any]:
    import nbformat

    try:
        node = nbformat.reads(json.dumps(data), as_version=4)
    except Exception as exc:  # nbformat raises many types for old, odd files
        raise NotebookError("notebook.unsupported-version", str(exc)[:200]) from exc
    return json.loads(nbformat.writes(node))


def parse_notebook(raw: bytes, path: Path, record_id: str) -> Notebook:
    digest = hashlib.sha256(raw).hexdigest()
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotebookError("notebook.invalid-json", str(exc)[:200]) from exc
    if not isinstance(data, dict):
        raise NotebookError("notebook.invalid-json", "the top level is not an object")
    major = data.get("nbformat")
    if major == 3:
        data = _upgrade_v3(data)
    elif major != 4:
        raise NotebookError("notebook.unsupported-version", f"nbformat {major!r}")
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    kernel = _kernel(metadata)
    if kernel == "python2":
        raise NotebookError("notebook.python2", "the notebook ran on a Python 2 kernel")
    if kernel != "python3":
        raise NotebookError("notebook.not-python", f"kernel language {kernel}")
    raw_cells = data.get("cells")
    if not isinstance(raw_cells, list):
        raise NotebookError("notebook.bad-structure", "no list of cells")
    cells = []
    for index, raw_cell in enumerate(raw_cells):
        if not isinstance(raw_cell, dict):
            raise NotebookError("notebook.bad-structure", f"cell {index} is not an object")
        outputs = raw_cell.get("outputs") if isinstance(raw_cell.get("outputs"), list) else []
        cells.append(
            Cell(
                index=index,
                cell_type=str(raw_cell.get("cell_type", "")),
                source=_text(raw_cell.get("source")),
                outputs=tuple(o for o in map(_output, outputs) if o is not None),
            )
        )
    notebook = Notebook(path, record_id, tuple(cells), digest, kernel)
    if not notebook.code_cells:
        raise NotebookError("notebook.no-code", "no code cells")
    if not any(c.outputs for c in notebook.code_cells):
        raise NotebookError("notebook.no-outputs", "no code cell has a saved output")
    return notebook


def load_notebook(path: Path, record_id: str) -> Notebook:
    try:
        size = path.stat().st_size
        if size > MAX_NOTEBOOK_BYTES:
            raise NotebookError("notebook.too-large", f"{size} bytes")
        raw = path.read_bytes()
    except OSError as exc:
        raise NotebookError("notebook.unreadable", str(exc)[:200]) from exc
    return parse_notebook(raw, path, record_id)
