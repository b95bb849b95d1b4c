"""`--llm URL`: a question proposed by an OpenAI-compatible endpoint for a cell whose
answer the deterministic describer cannot state (issue 32 point 3, as SmolDataEnvs does).

Only a cell refused for its wording alone gets a proposal (`question.undescribed` at the
question step, or `question.unstated-step`: a statement the sentence leaves out); every
other gate has already passed, and the ones after the question (a row count that is the
file's own, the answer in the instruction, the constant-answer gate, reproduction in the
container) still decide. The endpoint sees the chain of cells the answer depends on (the
reference code, data paths already pointing at the workspace copies), the data files'
names and columns, and the saved output's shape, never its values. A proposal is kept
only when it leaks nothing (no answer, no reference code line, no hidden path), is of
sane length, and names every data file the chain reads and every column the answer
cell's code (and an unstated step's code) names: a deterministic check that it is
specific, so a vague question is refused by reason, not by taste. The HTTP client and
its on-disk cache are the sessions' (`repo2rlenv.llm`), so a rerun asks nothing again.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from repo2rlenv.llm import _Endpoint
from smoldataenvs.datafiles import DataPlan, describe_columns
from smoldataenvs.describe import keys_are_answer
from smoldataenvs.llm import HIDDEN
from smoldataenvs.question import Question, QuestionError, leaks

PROPOSABLE = {"question.undescribed", "question.unstated-step"}
"""The deterministic refusals a proposal may replace: the question could not be worded."""
RULE = "llm-proposed"
MIN_CHARS = 20
MAX_CHARS = 1200
SHOWN_COLUMNS = 40
PROPOSE_SYSTEM = (
    "You write one data-analysis question for an analyst who has the data files but not "
    "the notebook. You are shown the notebook cells that compute a result and the shape of "
    "that result. Write a question whose exact answer is that result: name the data "
    "file(s) and every column used, spelt exactly as given, and state every filter, "
    "grouping, sort, cut, cleaning step and rounding the code applies, in plain words. "
    "Do not include code, do not answer the question, do not say how it is checked. "
    "Reply with the question only."
)


@dataclass(frozen=True)
class Chain:
    """What a proposal is asked from and checked against (no answer values are sent)."""

    refusal: QuestionError
    reference: str
    answer: dict
    data: DataPlan
    answer_cell: ast.Module
    chain: list[ast.stmt]
    step: ast.stmt | None
    markdown: str


def shape(answer: dict) -> str:
    """The saved output's shape in words: what the result is, never what it holds."""
    kind, value = answer["kind"], answer["value"]
    if kind == "number":
        return "a single whole number" if type(value) is int else "a single number"
    if kind == "string":
        return "a single text value"
    if kind == "list":
        return f"a list of {len(value)} values"
    if kind == "mapping":
        return f"{len(value)} labelled values (one value per label)"
    if kind == "table":
        columns = ", ".join(f"`{c}`" for c in answer["columns"])
        return f"a table with the columns {columns} and {len(value)} rows"
    return f"a {kind} value"


def _file_columns(data: DataPlan) -> dict[str, tuple[str, ...]]:
    return {t: describe_columns(f.local)[1] for t, f in sorted(data.files.items())}


def prompt(chain: Chain) -> str:
    """The user message: files, the chain's code, the result's shape, the notebook's words."""
    lines = ["Data files in the working folder:"]
    for target, columns in _file_columns(chain.data).items():
        shown = ", ".join(f"`{c}`" for c in columns[:SHOWN_COLUMNS])
        lines.append(f"- `{target}`" + (f" (columns: {shown})" if shown else ""))
    code = "\n".join(line for line in chain.reference.splitlines() if not line.startswith("# "))
    lines += [
        "",
        "The notebook computed the result with these cells (Python, in order; the value "
        "the last line shows is the result):",
        "",
        "```python",
        code.strip(),
        "```",
        "",
        f"The result is {shape(chain.answer)}.",
    ]
    if chain.markdown:
        lines += ["", "The notebook's text above the last cell:", "", chain.markdown]
    return "\n".join(lines) + "\n"


def _names(tree: ast.AST) -> set[str]:
    """Every text constant and attribute name in the code: candidates for column names."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


def _added_columns(statements: list[ast.stmt]) -> set[str]:
    """Columns the chain creates: `t['c'] = ...` and `t.assign(c=...)`."""
    added: set[str] = set()
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Assign):
                added |= {
                    target.slice.value
                    for target in node.targets
                    if isinstance(target, ast.Subscript)
                    and isinstance(target.slice, ast.Constant)
                    and isinstance(target.slice.value, str)
                }
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "assign":
                added |= {k.arg for k in node.keywords if k.arg}
    return added


def _bound(chain: Chain) -> set[str]:
    """The names in the assignments of the names the answer's last line reads: for
    `dictionary_agg` alone, `dictionary_agg = t.agg({'age': 'mean'})` (one level; the
    answer cell of an EDA notebook often shows a name computed cells before)."""
    body = chain.answer_cell.body
    read = {n.id for n in ast.walk(body[-1]) if isinstance(n, ast.Name)} if body else set()
    names: set[str] = set()
    for statement in chain.chain:
        if isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in read for t in statement.targets
        ):
            names |= _names(statement.value)
    return names


def required_names(chain: Chain) -> tuple[list[str], list[str]]:
    """(file names, column names) a specific question about this chain must mention: the
    file names of the data it reads, and every known column (a file's header or one the
    chain adds) that the answer cell's code, the assignments of the names its last line
    reads, or an unstated step's code name."""
    columns = {c for header in _file_columns(chain.data).values() for c in header}
    columns |= _added_columns(chain.chain)
    named = _names(chain.answer_cell) | _bound(chain)
    named |= _names(chain.step) if chain.step is not None else set()
    files = sorted({Path(target).name for target in chain.data.files})
    return files, sorted(named & columns)


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text) is not None


def check(text: str, chain: Chain) -> QuestionError | None:
    """Why a proposal is refused, or None: leaks first, then length, then specificity."""
    if HIDDEN.search(text):
        return QuestionError("llm.proposal-leaks", "names a hidden path")
    why = leaks(text, chain.answer, chain.reference)
    if why:
        return QuestionError("llm.proposal-leaks", why)
    if not MIN_CHARS <= len(text) <= MAX_CHARS:
        return QuestionError("llm.proposal-length", f"{len(text)} characters")
    files, columns = required_names(chain)
    missing = [f for f in files if not _mentions(text, f)]
    missing += [f"`{c}`" for c in columns if not _mentions(text, c)]
    if missing:
        return QuestionError("llm.proposal-vague", "does not name " + ", ".join(missing)[:160])
    return None


def uncheckable_step(chain: Chain) -> QuestionError | None:
    """A left-out step that names no column (an option such as
    `pd.options.mode.use_inf_as_na = True`, a loop over no named column): nothing in a
    proposal's wording can be checked against it, so none is asked for."""
    if chain.step is None:
        return None
    _, columns = required_names(chain)
    if _names(chain.step) & set(columns):
        return None
    shown = ast.unparse(chain.step)[:80]
    return QuestionError("llm.step-unchecked", f"the unstated step names no column: {shown}")


def wording_refusal(tree: ast.Module, step: ast.stmt | None) -> QuestionError:
    """Why the describer cannot word the question: the answer expression, or a step it
    leaves out (the deterministic refusal, exactly as it was before proposals)."""
    if step is None:
        shown = ast.unparse(tree.body[-1]) if tree.body else ""
        return QuestionError("question.undescribed", shown[:100])
    return QuestionError("question.unstated-step", ast.unparse(step)[:100])


class QuestionProposer(_Endpoint):
    """A proposed question for a chain, through the sessions' cached endpoint client."""

    system = PROPOSE_SYSTEM
    max_tokens = 400
    """A question is a few sentences (`MAX_CHARS`); a model that rambles is cut short and
    its reply refused for its length, not waited for."""

    def propose(self, chain: Chain) -> tuple[Question, dict]:
        """(question, provenance), or QuestionError with an `llm.*` reason."""
        unchecked = uncheckable_step(chain)
        if unchecked is not None:
            raise unchecked
        reply = self._ask(prompt(chain))
        if reply is None:
            raise QuestionError("llm.error", self.last_error or "no reply")
        text = reply.strip()
        if self.last_cut:
            self.rejected += 1
            cut = f"cut at max_tokens ({self.max_tokens}) after {len(text)} characters"
            raise QuestionError("llm.proposal-length", cut)
        refused = check(text, chain)
        if refused is not None:
            self.rejected += 1
            raise refused
        last = chain.answer_cell.body[-1] if chain.answer_cell.body else None
        if chain.answer["kind"] == "mapping" and not (
            isinstance(last, ast.Expr) and keys_are_answer(last.value)
        ):
            # As the template does: the labels are structure the agent is told.
            keys = ", ".join(f"`{k}`" for k, _ in chain.answer["value"])
            text += f"\n\nGive one line for each of: {keys}."
        origin = {"by": "llm", "model": self.model, "replaces": chain.refusal.reason}
        return Question(text, RULE), origin
