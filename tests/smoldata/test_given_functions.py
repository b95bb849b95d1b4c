"""A function the notebook defines and applies to a column is given to the agent as code
(`smoldataenvs/given_functions.py`): the salary notebook's `title_simplifier`, the
Titanic EDA's row-wise `impute_age`. Before, both cells were `question.undescribed`.

The agent's route is run here: the data plus `notebook_functions.py` from the bundle's
workspace, the question's words as pandas, must give the saved answer; and the
instruction never quotes the function (the static gate's `instruction.contains-solution`).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from smoldataenvs.candidates import Candidate, CandidateExtractor, CellSkip
from smoldataenvs.datafiles import FileIndex
from smoldataenvs.given_functions import FUNCTIONS_FILE, import_lines, needed_imports
from smoldataenvs.notebook import load_notebook
from smoldataenvs.options import NotebookOptions
from smoldataenvs.task import build_bundle
from tests.smoldata.helpers import code_cell, result, write_notebook

JOBS = pd.DataFrame(
    {
        "Job Title": ["Data Scientist", "Senior Data Scientist", "Data Engineer", "ML Engineer",
                      "Data Analyst", "Director of Data", "Lead Data Scientist", "Analyst II",
                      "Data Scientist II", "Machine Learning Engineer"],
        "Age": [31.0, None, 45.0, None, 23.0, 52.0, None, 29.0, 35.0, None],
        "Pclass": [1, 1, 2, 3, 3, 1, 2, 3, 2, 1],
    }
)  # fmt: skip
SIMPLIFIER = """import re

def title_simplifier(title):
    # the notebook's groups, in its order
    if re.search('scientist', title.lower()):
        return 'data scientist'
    elif 'engineer' in title.lower():
        return 'engineer'
    elif 'analyst' in title.lower():
        return 'analyst'
    else:
        return 'na'
"""
IMPUTE = """def impute_age(cols):
    age, pclass = cols['Age'], cols['Pclass']
    if pd.isnull(age):
        return {1: 37, 2: 29}.get(pclass, 24)
    return age
"""


def _extract(folder: Path, cells: list[dict]) -> dict[int, Candidate | CellSkip]:
    folder.mkdir(parents=True, exist_ok=True)
    JOBS.to_csv(folder / "jobs.csv", index=False)
    load = code_cell("import pandas as pd\ndf = pd.read_csv('jobs.csv')")
    path = write_notebook(folder / "jobs.ipynb", [load, *cells])
    found = CandidateExtractor(FileIndex([])).extract(load_notebook(path, "jobs.ipynb"))
    return {item.cell: item for item in found}


def _given_file(candidate: Candidate, folder: Path) -> str:
    bundle = build_bundle(
        candidate,
        NotebookOptions(dataset=str(folder)),
        dataset="local",
        revision=None,
        license=None,
        base_image="python:3.12-slim",
    )
    files = {f.path: f.content for f in bundle.files}
    metadata = bundle.config.metadata.smoldataenvs  # type: ignore[union-attr]
    assert metadata["given_functions"] == [f.definition.name for f in candidate.given]
    assert not any(line.strip() and line.strip() in bundle.instruction
                   for line in SIMPLIFIER.splitlines() + IMPUTE.splitlines()
                   if len(line.strip()) > 12)  # fmt: skip
    return files[f"environment/workspace/{FUNCTIONS_FILE}"].decode()


def _agent(folder: Path, given: str, code: str) -> str:
    """Runs `code` where the agent works: the data and the given module, nothing else
    of the notebook."""
    work = folder / "agent"
    work.mkdir()
    (work / FUNCTIONS_FILE).write_text(given)
    JOBS.to_csv(work / "jobs.csv", index=False)
    done = subprocess.run([sys.executable, "-c", code], cwd=work, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.timeout(60)
def test_a_function_applied_to_a_column_is_given_and_named(tmp_path: Path) -> None:
    jobs = JOBS.copy()
    namespace: dict = {}
    exec(SIMPLIFIER, namespace)
    counts = jobs["Job Title"].apply(namespace["title_simplifier"]).value_counts()
    counts = counts.rename_axis(None).rename("job_simp")  # as pandas 1.x shows it
    found = _extract(
        tmp_path,
        [
            code_cell(SIMPLIFIER),
            code_cell("df['job_simp'] = df['Job Title'].apply(title_simplifier)"),
            code_cell("df.job_simp.value_counts()", [result(repr(counts))]),
        ],
    )
    asked = found[3]
    assert isinstance(asked, Candidate), asked
    assert (
        "with the added column `job_simp` = what `title_simplifier` returns for each value of "
        f"`Job Title` (the function in {FUNCTIONS_FILE})" in asked.question.text
    )
    assert [f.definition.name for f in asked.given] == ["title_simplifier"]
    given = _given_file(asked, tmp_path)
    assert given.count("import re\n") == 1 and "pandas" not in given
    shown = _agent(
        tmp_path,
        given,
        "import pandas as pd\nfrom notebook_functions import title_simplifier\n"
        "df = pd.read_csv('jobs.csv')\n"
        "print(df['Job Title'].apply(title_simplifier).value_counts().to_dict())",
    )
    assert shown == str(dict(asked.answer["value"]))


@pytest.mark.timeout(60)
def test_a_row_wise_function_is_given_with_the_imports_it_reads(tmp_path: Path) -> None:
    namespace: dict = {"pd": pd}
    exec(IMPUTE, namespace)
    ages = JOBS[["Age", "Pclass"]].apply(namespace["impute_age"], axis=1)
    found = _extract(
        tmp_path,
        [
            code_cell(IMPUTE),
            code_cell("df['Age'] = df[['Age', 'Pclass']].apply(impute_age, axis=1)"),
            code_cell("df = df.drop('Pclass', axis=1)"),
            code_cell("df['Age'].mean()", [result(repr(float(ages.mean())))]),
        ],
    )
    asked = found[4]
    assert isinstance(asked, Candidate), asked
    assert (
        "with its column `Age` recomputed as what `impute_age` returns for each row of the "
        "`Age` and `Pclass` columns (a row of them, in this order) (the function in "
        f"{FUNCTIONS_FILE}), without the column(s) 'Pclass'" in asked.question.text
    )
    given = _given_file(asked, tmp_path)
    assert "\nimport pandas as pd\n" in given  # `pd.isnull` in its body
    shown = _agent(
        tmp_path,
        given,
        "import pandas as pd\nfrom notebook_functions import impute_age\n"
        "df = pd.read_csv('jobs.csv')\n"
        "print(df[['Age', 'Pclass']].apply(impute_age, axis=1).mean())",
    )
    assert float(shown) == pytest.approx(asked.answer["value"])


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "function",
    [
        # reads a table of the notebook: its state, not its code
        "def scaled(age):\n    return age / df['Age'].max()",
        # a file, and code from text
        "def scaled(age):\n    return len(open('jobs.csv').read()) + age",
        "def scaled(age):\n    return eval('age * 2')",
        # a setting of the notebook's
        "LIMIT = 40\ndef scaled(age):\n    return min(age, LIMIT)",
        # decorated
        "import functools\n@functools.lru_cache\ndef scaled(age):\n    return age * 2",
    ],
)
def test_a_function_that_is_not_self_contained_stays_refused(tmp_path: Path, function: str) -> None:
    found = _extract(
        tmp_path,
        [
            code_cell(function),
            code_cell("df['scaled'] = df['Age'].apply(scaled)"),
            code_cell("df['scaled'].mean()", [result("1.0")]),
        ],
    )
    refused = found[3]
    assert isinstance(refused, CellSkip), refused
    assert refused.reason in ("question.undescribed", "question.unstated-step"), refused


@pytest.mark.timeout(10)
def test_the_imports_a_function_needs_are_only_those_it_reads() -> None:
    tree = ast.parse(
        "import numpy as np\nimport re, math\nfrom os import path\n"
        "def f(x):\n    return np.floor(x) + math.pi if re.match('a', str(x)) else len([x])"
    )
    imports = import_lines(tree.body)
    function = tree.body[-1]
    assert isinstance(function, ast.FunctionDef)
    assert needed_imports(function, imports) == ["import math", "import numpy as np", "import re"]
    unread = ast.parse("def g(x):\n    return undefined_name(x)").body[0]
    assert isinstance(unread, ast.FunctionDef)
    assert needed_imports(unread, imports) is None


@pytest.mark.timeout(60)
def test_a_column_named_as_its_function_is_added_not_recomputed(tmp_path: Path) -> None:
    """The salary notebook's `df['seniority'] = df['Job Title'].apply(seniority)`: the
    name in the formula is the function's, the column read is `Job Title`."""
    function = "def seniority(title):\n    return 'senior' if 'senior' in title.lower() else 'na'"
    counts = pd.Series({"na": 9, "senior": 1}, name="seniority")
    found = _extract(
        tmp_path,
        [
            code_cell(function),
            code_cell("df['seniority'] = df['Job Title'].apply(seniority)"),
            code_cell("df.seniority.value_counts()", [result(repr(counts))]),
        ],
    )
    asked = found[3]
    assert isinstance(asked, Candidate), asked
    assert "with the added column `seniority` = what `seniority` returns" in asked.question.text
    assert "recomputed" not in asked.question.text
