"""`--llm URL` proposes the question of a cell the describer cannot word (issue 32 point
3). A proposal is kept only when it leaks nothing and names the data file and every
column the answer cell names, and every later gate still decides; each refusal has an
`llm.*` reason. Without `--llm` nothing changes. The server is the in-process stub of
`llm_stub` (the same one the rephraser's tests use)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from repo2rlenv.emit import Draft, Skip
from schemas import TaskBundle
from smoldataenvs import NotebookOptions, NotebookPipeline
from smoldataenvs.apisurface import local_surface
from smoldataenvs.proposer import PROPOSE_SYSTEM
from smoldataenvs.reproduce import Reproduction
from tests.smoldata.helpers import code_cell, markdown_cell, result, write_notebook
from tests.smoldata.llm_stub import FakeServer, running

pytestmark = pytest.mark.timeout(120)

ROWS = [(f"C{i}", 1000 + i * 737, "north" if i % 3 else "south") for i in range(30)]
UNDESCRIBED = "cities['people'].apply(lambda v: v // 1000).sum()"
GOOD = (
    "Divide each value of the `people` column of `cities.csv` by 1000, rounding down to a "
    "whole number, and give the sum of the results."
)


def _answer() -> int:
    frame = pd.DataFrame(ROWS, columns=["city", "people", "region"])
    return int(frame["people"].apply(lambda v: v // 1000).sum())


def _notebook(folder: Path, undescribed: list[str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = "\n".join(f"{c},{p},{r}" for c, p, r in ROWS)
    (folder / "cities.csv").write_text("city,people,region\n" + lines + "\n")
    total = sum(p for _, p, _ in ROWS)
    write_notebook(
        folder / "cities.ipynb",
        [
            code_cell("import pandas as pd\ncities = pd.read_csv('cities.csv')"),
            markdown_cell("How many thousands, roughly?"),
            *[code_cell(code, [result(str(_answer()))]) for code in undescribed or [UNDESCRIBED]],
            code_cell("cities['people'].sum()", [result(str(total))]),
        ],
    )
    return folder


def _replies(proposal: str):
    """The proposer gets `proposal`; the rephraser gets its question back unchanged, so a
    deterministic task is the same with or without `--llm`."""

    def reply(request: dict) -> str:
        system, user = (m["content"] for m in request["messages"])
        return proposal if system == PROPOSE_SYSTEM else user

    return reply


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    with running() as fake:
        yield fake


def _run(folder: Path, url: str | None = None, **options) -> tuple[list[TaskBundle], dict]:
    settings = NotebookOptions(
        dataset=str(folder), reproduce=False, base_image="example/base:1", llm_url=url, **options
    )
    events = list(NotebookPipeline(settings).events())
    skips = {e.record_id: (e.reason, e.detail) for e in events if isinstance(e, Skip)}
    return [e.bundle for e in events if isinstance(e, Draft)], skips


def _proposals(server: FakeServer) -> list[dict]:
    return [r for r in server.requests if r["messages"][0]["content"] == PROPOSE_SYSTEM]


def test_a_specific_proposal_is_kept_and_records_its_origin(
    server: FakeServer, tmp_path: Path
) -> None:
    server.reply = _replies(GOOD)
    drafts, skips = _run(_notebook(tmp_path / "nb"), server.url)
    assert "cities.ipynb#cell-2" not in skips
    [proposed] = [d for d in drafts if "cell-2" in d.config.metadata.repo2rlenv.source.record_id]
    assert GOOD in proposed.instruction
    assert str(_answer()) not in proposed.instruction
    provenance = proposed.config.metadata.smoldataenvs
    assert provenance["question_rule"] == "llm-proposed"
    assert provenance["question_origin"] == {
        "by": "llm",
        "model": "default",
        "replaces": "question.undescribed",
    }
    [request] = _proposals(server)
    assert request["max_tokens"] == 400 and request["model"] == "default"
    sent = request["messages"][1]["content"]
    # The chain's code, the file and its columns, the result's shape: never its value.
    assert "apply(lambda v: v // 1000).sum()" in sent and "`cities.csv`" in sent
    assert "a single whole number" in sent and str(_answer()) not in sent
    assert "How many thousands" in sent
    # The answer format stays the template's.
    assert proposed.instruction.rstrip().endswith("graded exactly).")


def test_a_proposal_is_cached_so_a_rerun_asks_nothing(server: FakeServer, tmp_path: Path) -> None:
    server.reply = _replies(GOOD)
    folder = _notebook(tmp_path / "nb")
    first, _ = _run(folder, server.url)
    server.reply = _replies("Something else entirely about `cities.csv` and `people` columns.")
    second, _ = _run(folder, server.url)
    assert [d.instruction for d in second] == [d.instruction for d in first]
    assert len(_proposals(server)) == 1


VAGUE = "Compute the total of the transformed values in the data."
NO_COLUMN = "Compute the sum of the values in `cities.csv` divided by 1000."
ANSWERED = f"Show that the `people` column of `cities.csv` gives {_answer()}."
CODE = f"Compute {UNDESCRIBED} on `people` of `cities.csv`."
HIDDEN = "Read /tests/expected.json: `people` of `cities.csv`."


@pytest.mark.parametrize(
    ("proposal", "reason", "named"),
    [
        (VAGUE, "llm.proposal-vague", "cities.csv"),
        (NO_COLUMN, "llm.proposal-vague", "`people`"),
        (ANSWERED, "llm.proposal-leaks", "contains the answer"),
        (CODE, "llm.proposal-leaks", "quotes the reference code"),
        (HIDDEN, "llm.proposal-leaks", "hidden path"),
        ("`people`?", "llm.proposal-length", "characters"),
    ],
)
def test_a_vague_or_leaking_proposal_is_refused_by_reason(
    server: FakeServer, tmp_path: Path, proposal: str, reason: str, named: str
) -> None:
    server.reply = _replies(proposal)
    drafts, skips = _run(_notebook(tmp_path / "nb"), server.url)
    why, detail = skips["cities.ipynb#cell-2"]
    assert why == reason
    assert named in detail and "(instead of question.undescribed)" in detail
    assert len(drafts) == 1  # the deterministic cell is unaffected


def test_a_proposal_cut_at_max_tokens_is_refused_as_such(
    server: FakeServer, tmp_path: Path
) -> None:
    """A real model stopped at the cap can leave a question that names every file and
    column and is short enough, yet ends mid-sentence; the length check alone kept it."""
    server.reply = _replies(GOOD)
    server.finish_reason = "length"
    drafts, skips = _run(_notebook(tmp_path / "nb"), server.url)
    why, detail = skips["cities.ipynb#cell-2"]
    assert why == "llm.proposal-length" and "cut at max_tokens (400)" in detail
    [kept] = drafts  # the deterministic cell, its rephrasing (also cut) not used
    assert "Compute the sum of the `people` column" in kept.instruction


def test_a_name_shown_alone_must_have_its_columns_named(
    server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`total` alone in the answer cell: the columns of `total = ...` count, as the
    EDA corpus's `dictionary_agg`, `max_age` cells need."""
    split = f"total = {UNDESCRIBED}\ntotal"
    server.reply = _replies("Compute the sum of the thousands in `cities.csv`.")
    _, skips = _run(_notebook(tmp_path / "vague", [split]), server.url)
    assert skips["cities.ipynb#cell-2"][0] == "llm.proposal-vague"
    assert "`people`" in skips["cities.ipynb#cell-2"][1]
    server.reply = _replies(GOOD)
    monkeypatch.setenv("REPO2RLENV_CACHE_DIR", str(tmp_path / "cache"))  # not the cached reply
    drafts, skips = _run(_notebook(tmp_path / "named", [split]), server.url)
    assert "cities.ipynb#cell-2" not in skips and len(drafts) == 2


def test_an_endpoint_error_is_counted_and_the_rest_goes_on(
    server: FakeServer, tmp_path: Path
) -> None:
    server.status = 500
    drafts, skips = _run(_notebook(tmp_path / "nb"), server.url)
    reason, detail = skips["cities.ipynb#cell-2"]
    assert reason == "llm.error" and "HTTPError" in detail
    [kept] = drafts
    assert "Compute the sum of the `people` column" in kept.instruction


def test_without_llm_nothing_changes_and_deterministic_tasks_keep_their_bytes(
    server: FakeServer, tmp_path: Path
) -> None:
    folder = _notebook(tmp_path / "nb")
    plain, skips = _run(folder)
    assert skips["cities.ipynb#cell-2"] == ("question.undescribed", UNDESCRIBED)
    assert server.requests == []
    [deterministic] = plain
    assert "question_origin" not in deterministic.config.metadata.smoldataenvs
    server.reply = _replies(GOOD)
    with_llm, _ = _run(folder, server.url)
    [same] = [d for d in with_llm if d.task_id == deterministic.task_id]
    assert same.model_dump() == deterministic.model_dump()


def test_an_unstated_step_that_names_no_column_is_not_asked(
    server: FakeServer, tmp_path: Path
) -> None:
    server.reply = _replies(GOOD)
    step = "pd.options.mode.use_inf_as_na = True\ncities['people'].mean()"
    _, skips = _run(_notebook(tmp_path / "nb", [step]), server.url)
    reason, detail = skips["cities.ipynb#cell-2"]
    assert reason == "llm.step-unchecked" and "use_inf_as_na" in detail
    assert _proposals(server) == []


def test_a_proposal_still_passes_every_later_gate(server: FakeServer, tmp_path: Path) -> None:
    """The cap, and the reproduction in the container (a stand-in reproducer here): a
    refused proposal is marked so it can be counted."""
    server.reply = _replies(GOOD)
    folder = _notebook(tmp_path / "nb")
    total = sum(p for _, p, _ in ROWS)
    write_notebook(  # the plain question first, so the cap is full when the proposal comes
        tmp_path / "capped" / "cities.ipynb",
        [
            code_cell("import pandas as pd\ncities = pd.read_csv('cities.csv')"),
            code_cell("cities['people'].sum()", [result(str(total))]),
            code_cell(UNDESCRIBED, [result(str(_answer()))]),
        ],
    )
    (tmp_path / "capped" / "cities.csv").write_bytes((folder / "cities.csv").read_bytes())
    _, skips = _run(tmp_path / "capped", server.url, max_per_dataset=1)
    reason, detail = skips["cities.ipynb#cell-2"]
    assert reason == "hygiene.max-per-dataset" and detail.endswith("[llm-proposed question]")

    zero = "cities['people'].apply(lambda v: v * 0).sum()"
    write_notebook(  # an answer a constant guess passes: the gate session drafts pass
        tmp_path / "constant" / "cities.ipynb",
        [
            code_cell("import pandas as pd\ncities = pd.read_csv('cities.csv')"),
            code_cell(zero, [result("0")]),
        ],
    )
    (tmp_path / "constant" / "cities.csv").write_bytes((folder / "cities.csv").read_bytes())
    _, skips = _run(tmp_path / "constant", server.url)
    reason, detail = skips["cities.ipynb#cell-1"]
    assert reason == "clean.semantic.constant-answer"
    assert detail.endswith("[llm-proposed question]")

    class Mismatch:
        def run(self, bundle) -> Reproduction:
            origin = bundle.config.metadata.smoldataenvs.get("question_origin")
            if origin:
                return Reproduction(False, "reproduce.mismatch", "expected '1', reproduced '2'")
            return Reproduction(True, "", "reference reward 1.0", 1.0)

    settings = NotebookOptions(dataset=str(folder), base_image="example/base:1", llm_url=server.url)
    pipeline = NotebookPipeline(settings, reproducer=Mismatch(), surface=local_surface())  # type: ignore[arg-type]
    events = list(pipeline.events())
    refused = {e.record_id: (e.reason, e.detail) for e in events if isinstance(e, Skip)}
    assert refused["cities.ipynb#cell-2"][0] == "reproduce.mismatch"
    assert refused["cities.ipynb#cell-2"][1].endswith("[llm-proposed question]")
    assert len([e for e in events if isinstance(e, Draft)]) == 1
    assert json.dumps(refused)  # plain data, as the --json report writes it


@pytest.mark.docker
@pytest.mark.timeout(600)
def test_a_proposed_question_is_kept_only_when_its_reference_reproduces(
    server: FakeServer, docker_ready: str, tmp_path: Path
) -> None:
    """The real container check: the proposal's reference reproduces the saved answer
    (kept, `smoldata.reproduce` passed); a cell whose saved answer does not follow from
    its code is refused in the container like any other draft."""
    hundreds = GOOD.replace("1000", "100")

    def reply(request: dict) -> str:
        system, user = (m["content"] for m in request["messages"])
        if system != PROPOSE_SYSTEM:
            return user
        return hundreds if "v // 100)" in user else GOOD

    server.reply = reply
    wrong = "cities['people'].apply(lambda v: v // 100).sum()"  # saved output: the // 1000 sum
    folder = _notebook(tmp_path / "nb", [UNDESCRIBED, wrong])
    settings = NotebookOptions(dataset=str(folder), base_image=docker_ready, llm_url=server.url)
    events = list(NotebookPipeline(settings).events())
    refused = {e.record_id: (e.reason, e.detail) for e in events if isinstance(e, Skip)}
    assert refused["cities.ipynb#cell-3"][0] == "reproduce.mismatch"
    assert refused["cities.ipynb#cell-3"][1].endswith("[llm-proposed question]")
    bundles = {e.bundle.config.metadata.repo2rlenv.source.record_id: e.bundle for e in events
               if isinstance(e, Draft)}  # fmt: skip
    proposed = bundles["cities.ipynb#cell-2"]
    assert proposed.config.metadata.smoldataenvs["question_origin"]["by"] == "llm"
    [check] = [
        c for c in proposed.config.metadata.repo2rlenv.checks if c.rule_id == "smoldata.reproduce"
    ]
    assert (check.status, check.rewards) == ("passed", [1.0])
