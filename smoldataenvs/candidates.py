"""From one notebook to question candidates: each code cell with a saved output either
becomes a `Candidate` (answer, slice, data, instruction) or a `CellSkip` with a reason.

The checks run cheapest first: the saved output, then the cell's own code, then the
slice and what it touches (network, randomness, clock, data files), then the question.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import PurePosixPath

from smoldataenvs.answer_read import answer_output, read_answer, unwrap_print
from smoldataenvs.answer_values import answer_numbers, is_boolean, text_extreme
from smoldataenvs.cellcode import ParsedCell, hazards, imported_modules, parse_cell
from smoldataenvs.computed import Computed
from smoldataenvs.datafiles import (
    DataError,
    DataPlan,
    FileIndex,
    apply_rewrites,
    describe_columns,
    plan_data,
)
from smoldataenvs.dataflow import Difficulty, difficulty
from smoldataenvs.derived import correlation_parts, derived
from smoldataenvs.derived_keys import KEY_CAP, beyond_top_rows, one_row_group, one_row_groups
from smoldataenvs.describe_words import AGGREGATES
from smoldataenvs.given_functions import GivenFunction
from smoldataenvs.grader import AnswerError
from smoldataenvs.notebook import Cell, Notebook
from smoldataenvs.plots import PlottedAggregate, plot_names, plotted_aggregates
from smoldataenvs.proposer import PROPOSABLE, Chain, QuestionProposer, wording_refusal
from smoldataenvs.question import (
    DataNote,
    Question,
    QuestionError,
    clean_markdown,
    compose,
    leaks,
    prose_leaks,
    question_sentence,
)
from smoldataenvs.row_count import COUNTED_BY, CUT_FRAME_REFUSALS, cut_frame_count, cut_of
from smoldataenvs.slicing import Slice, SliceError, backward_slice, statement_source
from smoldataenvs.stated_steps import (
    describer_for,
    rounded_answer,
    rounding_settings,
    unstated_step,
)
from smoldataenvs.top_rows import grouped_aggregate, tied_cut

ORDERING_METHODS = {"sort_values", "sort_index", "nlargest", "nsmallest", "value_counts"}
NUMERIC_DESCRIBE = ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]
DERIVABLE = {
    "question.undescribed",
    "answer.table-too-large",
    "answer.table-truncated",
    "question.count-without-filter",  # a corr() over 8 columns reduced to its row count
    "answer.too-many-items",  # a long value_counts() or grouped Series: named keys
    "output.table",  # an info() report: the columns that miss values (missing_counts)
    "answer.tied-cut",  # its top rows tie at the cut, its keys' values do not
    "answer.multiindex",  # a long two-level grouped Series: named pairs of keys
    "question.one-row-group",  # top rows of one-row groups; its groups with rows still asked
}
"""The refusals of a table or a long Series that `derived` turns into questions."""
PINNED_PACKAGES = {
    "pandas": "pandas==2.2.3",
    "numpy": "numpy==1.26.4",
    "scipy": "scipy==1.13.1",
    "sklearn": "scikit-learn==1.5.2",
    "matplotlib": "matplotlib==3.9.2",
    "seaborn": "seaborn==0.13.2",
    "statsmodels": "statsmodels==0.14.4",
    "openpyxl": "openpyxl==3.1.5",
    "xlrd": "xlrd==2.0.1",
}
"""What a task image installs when its base lacks a module the slice imports (or a
reader's engine, `reader_engines`)."""
EXCEL_ENGINES = {".xls": "xlrd"}
"""The module `pd.read_excel` reads a file with, by its suffix (pandas' own choice);
any other suffix (`.xlsx`, `.xlsm`, a name it cannot see) is openpyxl's."""
PROVISIONAL = {"kind": "mapping", "value": [["provisional", 0.5], ["answer", 1.5]]}
"""What a plot's question is checked with before its container computes the answer:
every gate that does not read the answer runs first, so a refused plot costs no trial."""
PROVISIONAL_COUNT = {"kind": "number", "value": -0.25}
"""A cut frame's row count (`row_count.cut_frame_count`) until its container computes
it: a number no count can be, so no gate mistakes it for a data file's length."""
PROVISIONAL_WORDING = "(a heat map's table: its questions are chosen once it is computed)"
"""The stand-in question of a heat map's table until its pairs are chosen (`derived`):
never written into a task."""


@dataclass(frozen=True)
class CellSkip:
    cell: int
    reason: str
    detail: str = ""


@dataclass
class Candidate:
    notebook: Notebook
    cell: int
    capture: str
    answer: dict
    slice: Slice
    reference: str
    data: DataPlan
    modules: list[str]
    instruction: str
    question: Question
    difficulty: Difficulty
    part: int = 0
    """1, 2, ... for the questions `derived` asks of one table (0: the cell's own answer)."""
    origin: dict | None = None
    """Set when `--llm` proposed the question: the model and the refusal it replaced."""
    plotted: PlottedAggregate | None = None
    """The plot whose aggregate is asked (`plots`): the answer is computed."""
    counted_frame: str | None = None
    """The cut frame the cell showed (`t.head()`) whose rows are counted instead
    (`row_count.cut_frame_count`): the answer is computed."""
    given: list[GivenFunction] = field(default_factory=list)
    """The notebook's functions the question applies, given to the agent as code
    (`given_functions`)."""
    finish: Callable[[Computed], list[Candidate | CellSkip]] | None = field(
        default=None, compare=False, repr=False
    )
    """Set while the answer is `PROVISIONAL`: the candidate again, with the computed
    answer, through every gate (or its refusal); a heat map's table gives one candidate
    per pair `derived` chooses."""

    @property
    def computed_as(self) -> str | None:
        """`plot` or `count` when the answer is computed in the task's container (no
        saved output holds it), else None."""
        if self.plotted is not None:
            return "plot"
        return "count" if self.counted_frame is not None else None

    @property
    def key(self) -> tuple[int, int]:
        return (self.cell, self.part)

    @property
    def dedup_key(self) -> tuple[str, str, str]:
        """The data, the question's words and the answer. `len(t)` and `t.shape[0]` (a
        table's rows shown by its head, counted) are worded apart but ask the same."""
        wording = self.question.text if self.question else self.instruction
        words = " ".join(wording.casefold().split()).replace(*SAME_COUNT)
        return (self.data.dataset_key, words, repr(self.answer))


SAME_COUNT = ("the number of rows (items) in ", "the number of rows of ")
"""`len(x)`'s words (x may be a list or a Series) and `t.shape[0]`'s, for a table."""


def unsorted_head(expression: ast.expr) -> str | None:
    """`df.head(10)`, `df[:10]`, `df.iloc[:10]` of a frame no call in the expression
    sorted: "the first N rows" of an unordered table is not a question (issue 32). An
    explicit `sort_values(...).head(n)` (a defined slice) is fine."""
    cut = cut_of(expression)
    if cut is None:
        return None
    if _calls(cut) & ORDERING_METHODS or grouped_aggregate(cut):
        return None
    return ast.unparse(expression)[:100]


def unsorted_rows_head(expression: ast.expr, assignments: dict[str, ast.expr]) -> str | None:
    """The first values of a column as the rows come (`tbl = df['table']; tbl.head()`,
    a list answer): the file's first rows read back, however the frame was cleaned
    first. A cut of a Series a call ordered or computed (`value_counts()`, a sort, a
    per-column or per-group aggregate) is a defined slice and passes."""
    cut = cut_of(expression)
    while isinstance(cut, ast.Name) and cut.id in assignments:
        cut = assignments[cut.id]  # the describer's assignments are inlined already
    if cut is None or grouped_aggregate(cut):
        return None
    if _calls(cut) & (ORDERING_METHODS | set(AGGREGATES) | {"describe", "corr", "agg"}):
        return None
    return ast.unparse(expression)[:100]


def _calls(node: ast.expr) -> set[str]:
    return {
        n.func.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
    }


def _bound_value(own: ParsedCell, statements: list[ast.stmt]) -> ast.expr:
    """The expression a final bare name was last assigned in the slice (else a no-op)."""
    body = own.tree.body if own.tree is not None else []
    last = body[-1].value if body and isinstance(body[-1], ast.Expr) else None
    if not isinstance(last, ast.Name):
        return ast.Constant(None)
    bound = [
        stmt.value
        for stmt in statements
        if isinstance(stmt, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == last.id for t in stmt.targets)
    ]
    return bound[-1] if bound else ast.Constant(None)


def _describes(expression: ast.expr | None) -> bool:
    return (
        isinstance(expression, ast.Call)
        and isinstance(expression.func, ast.Attribute)
        and expression.func.attr == "describe"
    )


def reader_engines(statements: list[ast.stmt]) -> set[str]:
    """The modules pandas imports for the slice's readers, which no statement names:
    `pd.read_excel('sales.xlsx')` needs openpyxl in the image, a `.xls` file xlrd."""
    engines = set()
    for node in (n for s in statements for n in ast.walk(s)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in ("read_excel", "ExcelFile"):
            continue
        first = node.args[0] if node.args else None
        name = first.value if isinstance(first, ast.Constant) else None
        suffix = PurePosixPath(name).suffix.lower() if isinstance(name, str) else ""
        engines.add(EXCEL_ENGINES.get(suffix, "openpyxl"))
    return engines


def third_party(statements: list[ast.stmt]) -> list[str]:
    modules = (imported_modules(statements) | reader_engines(statements)) - set(
        sys.stdlib_module_names
    )
    unknown = sorted(modules - set(PINNED_PACKAGES))
    if unknown:
        raise SliceError("env.unknown-import", ", ".join(unknown))
    return sorted(modules)


def reference_script(
    record_id: str, parsed: dict[int, ParsedCell], sliced: Slice, rewrites: dict[str, str]
) -> str:
    lines = [
        f"# Reference for {record_id}: the notebook cells this answer depends on, in order,",
        "# with data paths pointing at the copies in /workspace.",
    ]
    for index in sliced.cells:
        lines.append(f"# %% [cell {index}]")
        for statement in sliced.statements[index]:
            lines.append(apply_rewrites(statement_source(parsed[index], statement), rewrites))
    return "\n".join(lines) + "\n"


def _background(notebook: Notebook, cells: list[int], answer: dict, reference: str) -> list[str]:
    excerpts: list[str] = []
    total = 0
    for index in cells:
        text = clean_markdown(notebook.markdown_before(index))
        if not text or text in excerpts or prose_leaks(text, answer, reference):
            continue
        if total + len(text) > 2400:
            break
        excerpts.append(text)
        total += len(text)
    return excerpts


class CandidateExtractor:
    """Stateless per notebook apart from the file-name index shared across notebooks."""

    proposer: QuestionProposer | None = None
    """`--llm`: proposes the question of a cell refused only for its wording."""

    def __init__(self, index: FileIndex, *, allow_boolean: bool = False) -> None:
        self.index = index
        self.allow_boolean = allow_boolean

    def extract(self, notebook: Notebook) -> Iterator[Candidate | CellSkip]:
        parsed = {c.index: parse_cell(c.index, c.source) for c in notebook.code_cells}
        modules = plot_names(list(parsed.values()))
        for cell in notebook.code_cells:
            if not cell.outputs:
                continue
            try:
                own = self._candidate(notebook, cell, parsed)
            except (AnswerError, SliceError, DataError, QuestionError) as exc:
                if exc.reason == "output.plot":
                    yield from self._plotted(notebook, cell, parsed, modules, exc)
                else:
                    yield from self._derived(notebook, cell, parsed, exc)
                continue
            yield own
            # Its top rows were asked: other keys of a long Series are new questions.
            parts = beyond_top_rows(parsed[cell.index], *answer_output(cell), own.answer)
            yield from self._parts(notebook, cell, parsed, parts)

    def _derived(
        self, notebook: Notebook, cell: Cell, parsed: dict[int, ParsedCell], error: Exception
    ) -> Iterator[Candidate | CellSkip]:
        """The cell's `describe()`/`corr()` table or long Series asked about named cells
        or keys (`derived`); else `_proposed` (with `--llm`) or the cell's own refusal."""
        reason = getattr(error, "reason", "")
        parts = []
        if reason in DERIVABLE and not parsed[cell.index].error:
            try:
                capture, text = answer_output(cell)
            except AnswerError:  # `output.table` of an HTML output: nothing to derive
                capture, text = "", ""
            parts = derived(parsed[cell.index], text, capture, reason) if capture else []
        if not parts and reason in CUT_FRAME_REFUSALS:
            counted = self._counted(notebook, cell, parsed, error)
            if counted is not None:
                yield counted
                return
        if not parts:
            yield self._proposed(notebook, cell, parsed, error)
            return
        yield from self._parts(notebook, cell, parsed, parts)

    def _parts(
        self, notebook: Notebook, cell: Cell, parsed: dict[int, ParsedCell], parts: list
    ) -> Iterator[Candidate | CellSkip]:
        """Each derived question through every gate of a plain cell, up to KEY_CAP kept
        (a Series' next key stands in for a one-row group, not for a cell's refusal)."""
        kept, tries = 0, KEY_CAP
        for part, (own, answer) in enumerate(parts, start=1):
            if kept == KEY_CAP or part > tries:
                return
            try:
                yield self._candidate(notebook, cell, parsed, (own, answer), part)
                kept += 1
            except (AnswerError, SliceError, DataError, QuestionError) as exc:
                tries += exc.reason == "question.one-row-group"  # the next key stands in
                yield CellSkip(cell.index, exc.reason, f"derived question {part}: {exc.detail}")

    def _plotted(
        self,
        notebook: Notebook,
        cell: Cell,
        parsed: dict[int, ParsedCell],
        modules: set[str],
        error: Exception,
    ) -> Iterator[Candidate | CellSkip]:
        """One provisional candidate per aggregate the cell plots (`plots`), past every
        gate that does not read the answer; the miner computes the answer and calls
        `finish`. A cell that plots no aggregate keeps its `output.plot` refusal."""
        found = plotted_aggregates(parsed[cell.index], modules)
        if not found:
            yield self._proposed(notebook, cell, parsed, error)
            return
        first = 1 if len(found) > 1 else 0
        for part, plotted in enumerate(found, start=first):
            try:
                preset = (plotted.cell, PROVISIONAL)
                candidate = self._asked(notebook, cell, parsed, plotted, part, preset)
            except (AnswerError, SliceError, DataError, QuestionError) as exc:
                yield CellSkip(cell.index, exc.reason, f"plot {plotted.plot[:60]}: {exc.detail}")
                continue
            candidate.finish = partial(self._finished, notebook, cell, parsed, plotted, part)
            yield candidate

    def _asked(
        self,
        notebook: Notebook,
        cell: Cell,
        parsed: dict[int, ParsedCell],
        plotted: PlottedAggregate,
        part: int,
        preset: tuple[ParsedCell, dict],
    ) -> Candidate:
        """A plot's candidate: `preset` is its rewritten cell and answer (`PROVISIONAL`
        until computed). A heat map's table is never asked itself: until its pairs are
        chosen only its wording is let pass (every other gate runs before the trial)."""
        provisional = plotted.table is not None and preset[1] is PROVISIONAL
        candidate = self._candidate(
            notebook, cell, parsed, preset, part, provisional=provisional, computed=True
        )
        candidate.plotted = plotted
        return candidate

    def _finished(
        self,
        notebook: Notebook,
        cell: Cell,
        parsed: dict[int, ParsedCell],
        plotted: PlottedAggregate,
        part: int,
        computed: Computed,
    ) -> list[Candidate | CellSkip]:
        """The plot's candidate with its computed answer, or a heat map's table asked
        as `derived` asks a printed one: parts `100 * part + 1, 2...` (a cell's plots
        are parts 1, 2...; a lone plot is part 0), each through every gate."""
        asked: list[tuple[ParsedCell, dict]] = []
        if plotted.table is None and computed.answer is not None:
            asked = [(plotted.cell, computed.answer)]
        elif plotted.table is not None and computed.correlations is not None:
            asked = correlation_parts(plotted.cell, computed.correlations)
            if not asked:
                return [CellSkip(cell.index, "plot.no-pairs", f"plot {plotted.plot[:60]}")]
        out: list[Candidate | CellSkip] = []
        for number, preset in enumerate(asked, start=1):
            step = part if plotted.table is None else 100 * part + number
            try:
                out.append(self._asked(notebook, cell, parsed, plotted, step, preset))
            except (AnswerError, SliceError, DataError, QuestionError) as exc:
                out.append(CellSkip(cell.index, exc.reason, exc.detail))
        return out

    def _counted(
        self, notebook: Notebook, cell: Cell, parsed: dict[int, ParsedCell], error: Exception
    ) -> Candidate | CellSkip | None:
        """A frame shown by its first rows (or too large to show) asked as its row count
        (`row_count.cut_frame_count`): a provisional candidate past every gate that does
        not read the answer, finished once the container computed it; None when the cell
        shows no such frame (the cell's own refusal stands)."""
        own = parsed[cell.index]
        reduced = cut_frame_count(own) if not own.error else None
        if reduced is None:
            return None
        shown = ast.unparse(own.tree.body[-1]) if own.tree and own.tree.body else ""
        try:
            candidate = self._count_asked(notebook, cell, parsed, reduced, shown, PROVISIONAL_COUNT)
        except (AnswerError, SliceError, DataError, QuestionError) as exc:
            # The cell's own refusal stands; why its row count is not asked either, noted.
            detail = f"{getattr(error, 'detail', '')[:100]} (its row count: {exc.reason})"
            return CellSkip(cell.index, getattr(error, "reason", exc.reason), detail)
        candidate.finish = partial(self._count_finished, notebook, cell, parsed, reduced, shown)
        return candidate

    def _count_finished(
        self,
        notebook: Notebook,
        cell: Cell,
        parsed: dict[int, ParsedCell],
        reduced: ParsedCell,
        shown: str,
        computed: Computed,
    ) -> list[Candidate | CellSkip]:
        """The cut frame's candidate with its computed count, through every gate again
        (the count of a filter that kept every row is refused now)."""
        try:
            return [self._count_asked(notebook, cell, parsed, reduced, shown, computed.answer)]
        except (AnswerError, SliceError, DataError, QuestionError) as exc:
            return [CellSkip(cell.index, exc.reason, f"rows of {shown[:60]}: {exc.detail}")]

    def _count_asked(
        self,
        notebook: Notebook,
        cell: Cell,
        parsed: dict[int, ParsedCell],
        reduced: ParsedCell,
        shown: str,
        answer: dict | None,
    ) -> Candidate:
        """A cut frame's candidate (`answer`: `PROVISIONAL_COUNT` or the computed count)."""
        candidate = self._candidate(notebook, cell, parsed, (reduced, answer), counted=True)
        candidate.counted_frame = shown
        return candidate

    def _proposed(
        self, notebook: Notebook, cell: Cell, parsed: dict[int, ParsedCell], error: Exception
    ) -> Candidate | CellSkip:
        """With `--llm`, a cell refused only because its question cannot be worded is
        tried again with a proposed question (`proposer`); else its own refusal."""
        reason, detail = getattr(error, "reason", ""), getattr(error, "detail", "")
        if self.proposer is None or reason not in PROPOSABLE:
            return CellSkip(cell.index, reason, detail)
        try:
            return self._candidate(notebook, cell, parsed, propose=True)
        except (AnswerError, SliceError, DataError, QuestionError) as exc:
            why = f"{exc.detail} (instead of {reason})" if exc.reason.startswith("llm.") else ""
            return CellSkip(cell.index, exc.reason, why or exc.detail)

    def _answer(
        self,
        cell: Cell,
        parsed: dict[int, ParsedCell],
        preset: tuple | None = None,
        counted: bool = False,
    ) -> tuple[ParsedCell, str, dict, dict[int, ParsedCell], bool]:
        """The cell's parsed code, how its answer was shown, and the answer read from
        the saved output (a sorted table cut to its top rows, or any other table too
        large to show reduced to its row count, replaces the cell's code in `parsed`),
        and whether it is such a count; a cell or output no answer can come from raises
        its reason. `preset`: a derived question's (rewritten cell, answer); `counted`:
        the preset's answer is its row count."""
        # A preset's answer is not read off the saved output (a plot's is computed).
        capture, text = answer_output(cell) if preset is None else ("result", "")
        own = parsed[cell.index] if preset is None else preset[0]
        if own.error:
            raise SliceError(own.error, own.detail)
        if own.has_shell:
            raise SliceError("cell.shell", own.magics[0].strip()[:60])
        if own.has_magic:
            raise SliceError("cell.magic", own.magics[0].strip()[:60])
        assert own.tree is not None
        if preset is not None:
            answer, capture, parsed = preset[1], "result", {**parsed, cell.index: own}
        else:
            own, text, capture = unwrap_print(own, text, capture)
            answer, own, capture, counted = read_answer(own, text, capture)
            parsed = {**parsed, cell.index: own}
        if answer["kind"] == "table" and capture == "result":
            capture = "table"  # a grouped Series: the reference writes it as a table too
        if not self.allow_boolean and is_boolean(answer):
            raise AnswerError("answer.boolean", "a yes/no answer: a guess scores half the time")
        if own.tree.body and (extreme := text_extreme(own.tree.body[-1], answer)) is not None:
            raise AnswerError("answer.text-extreme", extreme)
        if capture != "stream" and not (own.tree.body and isinstance(own.tree.body[-1], ast.Expr)):
            raise SliceError("cell.no-expression", "a result output but no final expression")
        body = own.tree.body
        last = body[-1].value if body and isinstance(body[-1], ast.Expr) else None
        if _describes(last) and (
            answer["kind"] != "mapping" or [k for k, _ in answer["value"]] != NUMERIC_DESCRIBE
        ):
            # The question names the numeric statistics; a text column's describe()
            # (count, unique, top, freq: `top` is any of tied values) is not that.
            raise QuestionError("question.undescribed", "describe() of a table or a text column")
        if answer["kind"] == "table":
            head = unsorted_head(own.tree.body[-1].value)
            if head is not None:
                raise AnswerError("answer.table-unsorted-head", head)
        tie = tied_cut(last, answer) if last is not None else None
        if tie is not None:
            raise AnswerError("answer.tied-cut", tie)
        return own, capture, answer, parsed, counted

    def _candidate(
        self,
        notebook: Notebook,
        cell: Cell,
        parsed: dict[int, ParsedCell],
        preset: tuple | None = None,
        part: int = 0,
        propose: bool = False,
        provisional: bool = False,
        computed: bool = False,
        counted: bool = False,
    ) -> Candidate:
        computed = computed or counted  # a cut frame's count is computed too
        own, capture, answer, parsed, counted = self._answer(cell, parsed, preset, counted)
        earlier = [p for i, p in parsed.items() if i < cell.index]
        rounding = rounding_settings([*earlier, own]) if not computed else []
        if rounding:  # the saved answer is the rounded display (a computed one is not)
            answer = rounded_answer(answer, rounding)
        sliced = backward_slice(earlier, own)
        statements = sliced.all_statements()
        tie = tied_cut(_bound_value(own, statements), answer)
        if tie is not None:  # `top = t.nlargest(5, 'c')` in one cell, `top` in the next
            raise AnswerError("answer.tied-cut", tie)
        problems = hazards(statements)
        if problems:
            raise SliceError(*problems[0])
        modules = third_party(statements)
        data = plan_data(statements, notebook.path.parent, self.index)
        if not data.files:
            raise QuestionError("question.no-data", "the answer does not depend on any data file")
        if part and (lone := one_row_group(own.tree.body[-1], data)):
            raise QuestionError("question.one-row-group", lone)  # a mean of one row
        if answer is not PROVISIONAL and (lone := one_row_groups(own.tree.body[-1], answer, data)):
            raise QuestionError("question.one-row-group", lone)  # mostly look-ups
        chain = difficulty(sliced)
        metadata = own.tree.body and _metadata_lookup(own.tree.body[-1], chain.only_fills)
        if not chain.computes or metadata:
            # `df.head()`, `df.shape`, `df['x']`, `df.describe()`, a value off one row:
            # read straight off the data, nothing computed (issue 32).
            shown = ast.unparse(own.tree.body[-1]) if own.tree.body else ""
            raise QuestionError("question.trivial-lookup", shown[:100])
        if counted and not any(chain.operations.get(kind) for kind in COUNTED_BY):
            # `len(df.describe().T)`, `len(df.assign(...))`: no rows were selected.
            shown = ast.unparse(own.tree.body[-1]) if own.tree.body else ""
            raise QuestionError("question.count-without-filter", shown[:100])
        reference = reference_script(notebook.record_id, parsed, sliced, data.rewrites)
        describer, sources = describer_for(statements[:-1], data)
        last = own.tree.body[-1] if own.tree.body else None
        if answer["kind"] != "table" and isinstance(last, ast.Expr):
            head = unsorted_rows_head(last.value, describer.assignments)
            if head is not None:  # a table's own cut was refused in `_answer`
                raise AnswerError("answer.table-unsorted-head", head)
        prompt = clean_markdown(notebook.markdown_before(cell.index))
        if prompt and prose_leaks(prompt, answer, reference):
            prompt = ""
        question = question_sentence(answer, own.tree.body, capture, describer)
        step = unstated_step(statements[:-1], describer, sources) if question else None
        if question is None and provisional:  # its pairs' questions are checked later
            question = Question(PROVISIONAL_WORDING, "provisional")
        origin = None
        if question is None or step is not None:
            refusal = wording_refusal(own.tree, step)
            if not propose or self.proposer is None:
                raise refusal
            asked = Chain(refusal, reference, answer, data, own.tree, statements, step, prompt)
            question, origin = self.proposer.propose(asked)
        notes = []
        numbers = answer_numbers(answer)
        for target, item in sorted(data.files.items()):
            rows, columns = describe_columns(item.local)
            if counted and rows in numbers:
                # The filter kept every row: the count is the file's own length.
                raise QuestionError("question.count-of-whole-file", f"{rows} rows, as {target}")
            # A row count that is (part of) the answer would give it away: `df.shape`.
            notes.append(DataNote(target, None if rows in numbers else rows, list(columns)))
        instruction = compose(
            notes=notes,
            modules=modules,
            background=_background(notebook, sliced.cells[:-1], answer, reference),
            question=question,
            prompt_markdown=prompt,
            answer=answer,
        )
        why = leaks(instruction, answer, reference)
        if why:
            raise QuestionError("question.leaks-answer", why)
        return Candidate(
            notebook=notebook,
            cell=cell.index,
            capture=capture,
            answer=answer,
            slice=sliced,
            reference=reference,
            data=data,
            modules=modules,
            instruction=instruction,
            question=question,
            difficulty=chain,
            part=part,
            origin=origin,
            given=describer.given() if origin is None else [],
        )


def _metadata_lookup(statement: ast.stmt, only_fills: bool = False) -> bool:
    """`df.dtypes`, `df.columns`: read off the table's header whatever cleaning ran
    before (a dropped duplicate row changes no type), so a look-up all the same. After
    steps that only fill or replace values (`only_fills`), the table's size is the file's
    too: `df.shape`, `len(df)`, `df.size`, `df.index` are look-ups."""
    value = statement.value if isinstance(statement, ast.Expr) else None
    if isinstance(value, ast.Attribute) and value.attr in ("dtypes", "columns"):
        return True
    if not only_fills:
        return False
    if isinstance(value, ast.Subscript):
        value = value.value  # `df.shape[0]`
    if isinstance(value, ast.Attribute):
        return value.attr in ("shape", "size", "index")
    return isinstance(value, ast.Call) and getattr(value.func, "id", None) == "len"  # `len(df)`
