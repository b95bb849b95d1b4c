"""Build the bundled example notebook (original content) with real saved outputs.

`python -m smoldataenvs.examples.make_bakery` runs each cell with pandas, the way a
notebook would, and writes `bakery/sales_analysis.ipynb` and `bakery/data/sales.csv`.
A test checks the committed copy equals this output.
"""

from __future__ import annotations

import ast
import contextlib
import io
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent / "bakery"

SALES = """day,product,quantity,unit_price
mon,sourdough,12,5.5
mon,baguette,30,2.25
mon,croissant,41,1.8
tue,sourdough,9,5.5
tue,baguette,26,2.25
tue,croissant,38,1.8
wed,sourdough,14,5.5
wed,baguette,33,2.25
wed,croissant,29,1.8
thu,sourdough,11,5.5
thu,baguette,27,2.25
thu,croissant,35,1.8
fri,sourdough,19,5.5
fri,baguette,40,2.25
fri,croissant,52,1.8
"""

CELLS = [
    ("markdown", "# Bakery sales, one week\n\nDaily sales per product from the till."),
    ("code", 'import pandas as pd\n\nsales = pd.read_csv("data/sales.csv")\nsales.head()'),
    ("markdown", "How many items were sold over the whole week?"),
    ("code", 'int(sales["quantity"].sum())'),
    ("markdown", "Which product brought in the most money?"),
    (
        "code",
        'sales["revenue"] = sales["quantity"] * sales["unit_price"]\n'
        'sales.groupby("product")["revenue"].sum().idxmax()',
    ),
    ("markdown", "Average revenue of a product on a day:"),
    ("code", 'round(float(sales["revenue"].mean()), 2)'),
    ("code", 'print("busiest day:", sales.groupby("day")["quantity"].sum().idxmax())'),
    ("code", 'import random\n\nrandom.choice(sales["product"].tolist())'),
]


def _run(code: str, namespace: dict) -> list:
    tree = ast.parse(code)
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    body = tree.body[:-1] if last is not None else tree.body
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        exec(compile(ast.Module(body=body, type_ignores=[]), "<cell>", "exec"), namespace)
        value = None
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
    outputs = []
    if stdout.getvalue():
        outputs.append(nbformat.v4.new_output("stream", name="stdout", text=stdout.getvalue()))
    if value is not None:
        data = {"text/plain": repr(value)}
        if hasattr(value, "to_html"):
            data["text/html"] = value.to_html()
        outputs.append(nbformat.v4.new_output("execute_result", data=data, execution_count=0))
    return outputs


def build() -> dict[str, str]:
    import os
    import random

    random.seed(7)
    (HERE / "data").mkdir(parents=True, exist_ok=True)
    (HERE / "data" / "sales.csv").write_text(SALES)
    notebook = nbformat.v4.new_notebook()
    notebook.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    }
    namespace: dict = {}
    count = 0
    cwd = os.getcwd()
    os.chdir(HERE)
    try:
        for kind, source in CELLS:
            if kind == "markdown":
                notebook.cells.append(nbformat.v4.new_markdown_cell(source))
                continue
            count += 1
            outputs = _run(source, namespace)
            for output in outputs:
                if output.output_type == "execute_result":
                    output.execution_count = count
            notebook.cells.append(
                nbformat.v4.new_code_cell(source, execution_count=count, outputs=outputs)
            )
    finally:
        os.chdir(cwd)
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index}"
    text = nbformat.writes(notebook) + "\n"
    (HERE / "sales_analysis.ipynb").write_text(text)
    return {"sales_analysis.ipynb": text, "data/sales.csv": SALES}


if __name__ == "__main__":
    for name in build():
        print(HERE / name)
