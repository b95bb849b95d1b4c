"""`--llm URL`: the question section may be rephrased by an OpenAI-compatible server,
but a reply that leaks the answer, names hidden paths, was cut at `max_tokens` or fails
is never used, and a reply is cached so a rerun asks nothing. The server here is a
small in-process stand-in speaking the same HTTP API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from repo2rlenv.emit import Draft
from smoldataenvs import NotebookOptions, NotebookPipeline
from smoldataenvs.llm import SYSTEM, Rephraser
from tests.smoldata.helpers import code_cell, markdown_cell, result, write_notebook
from tests.smoldata.llm_stub import FakeServer, running

INSTRUCTION = (
    "# A data-analysis question\n\nData.\n\n## Question\n\nCompute the sum of the `people` "
    "column of the data in `cities.csv`.\n\n## Answer\n\nWrite the answer to "
    "`/workspace/answer.txt` as a single number.\n"
)
ANSWER = {"kind": "number", "value": 985000}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    with running() as fake:
        yield fake


def test_a_clean_reply_replaces_only_the_question(server: FakeServer, tmp_path: Path) -> None:
    text, outcome = Rephraser(server.url, tmp_path).rephrase(INSTRUCTION, ANSWER, "")
    assert outcome == "rephrased"
    assert server.reply in text
    assert "Compute the sum" not in text
    assert text.endswith("`/workspace/answer.txt` as a single number.\n")
    [request] = server.requests
    assert request["model"] == "default" and request["max_tokens"] == Rephraser.max_tokens
    assert request["messages"][0]["content"] == SYSTEM
    assert request["messages"][1]["content"].startswith("Compute the sum of the `people`")


def test_a_rerun_is_answered_from_the_cache(server: FakeServer, tmp_path: Path) -> None:
    """Reruns give the same bytes without asking again (the rephraser had its own
    uncached client, so every `mine` asked anew)."""
    first, _ = Rephraser(server.url, tmp_path).rephrase(INSTRUCTION, ANSWER, "")
    server.reply = "A different wording of the sum of `people` in `cities.csv`."
    again, outcome = Rephraser(server.url, tmp_path).rephrase(INSTRUCTION, ANSWER, "")
    assert (again, outcome) == (first, "rephrased") and len(server.requests) == 1


def test_a_reply_cut_at_max_tokens_is_not_used(server: FakeServer, tmp_path: Path) -> None:
    """A rewrite that stopped at the cap can be short enough and leak nothing, yet end
    mid-sentence: refused, on a rerun from the cache too."""
    server.reply = "How many people live in the cities listed in"
    server.finish_reason = "length"
    for _ in range(2):
        rephraser = Rephraser(server.url, tmp_path)
        text, outcome = rephraser.rephrase(INSTRUCTION, ANSWER, "")
        assert (text, outcome) == (INSTRUCTION, "llm-rejected: cut at max_tokens")
        assert rephraser.rejected == 1
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        "The total is 985000 people.",
        "Read /tests/expected.json for the answer.",
        "",
        "x" * 5000,
    ],
)
def test_bad_replies_keep_the_template(server: FakeServer, reply: str, tmp_path: Path) -> None:
    server.reply = reply
    text, outcome = Rephraser(server.url, tmp_path, model="m").rephrase(INSTRUCTION, ANSWER, "")
    assert text == INSTRUCTION
    assert outcome.startswith("llm-rejected")


def test_an_unreachable_server_keeps_the_template(tmp_path: Path) -> None:
    rephraser = Rephraser("http://127.0.0.1:9/v1", tmp_path, model="m", timeout_s=2)
    text, outcome = rephraser.rephrase(INSTRUCTION, ANSWER, "")
    assert text == INSTRUCTION
    assert outcome.startswith("llm-error")


def test_the_pipeline_uses_the_rephrased_question(server: FakeServer, tmp_path: Path) -> None:
    (tmp_path / "cities.csv").write_text("city,people\nOslo,700000\nBergen,285000\n")
    write_notebook(
        tmp_path / "cities.ipynb",
        [
            code_cell("import pandas as pd\ncities = pd.read_csv('cities.csv')"),
            markdown_cell("How many people in all?"),
            code_cell("cities['people'].sum()", [result("985000")]),
        ],
    )
    options = NotebookOptions(
        dataset=str(tmp_path), reproduce=False, base_image="example/base:1", llm_url=server.url
    )
    [draft] = [e for e in NotebookPipeline(options).events() if isinstance(e, Draft)]
    assert server.reply in draft.bundle.instruction
    assert "985000" not in draft.bundle.instruction
