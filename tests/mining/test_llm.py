"""--llm: rewrites are used when they keep the names the task depends on, cached, and
never required. The endpoint here is a local stand-in for an OpenAI-compatible server."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from repo2rlenv.llm import InstructionRewriter


@pytest.fixture
def endpoint():
    state = {"answer": "", "requests": []}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state["requests"].append(body)
            choice = {"message": {"content": state["answer"]}}
            if state.get("finish_reason"):
                choice["finish_reason"] = state["finish_reason"]
            reply = json.dumps({"choices": [choice]})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(reply.encode())

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1", state
    server.shutdown()


ORIGINAL = "add sentence_count to `textstats.py`, tests import `sentence_count`"


def test_rewrite_is_kept_and_cached(endpoint, tmp_path):
    url, state = endpoint
    state["answer"] = "Please add `sentence_count` to `textstats.py`."
    rewriter = InstructionRewriter(url, tmp_path)
    assert rewriter.rewrite(ORIGINAL) == "Please add `sentence_count` to `textstats.py`.\n"
    assert state["requests"][0]["temperature"] == 0
    again = InstructionRewriter(url, tmp_path).rewrite(ORIGINAL)
    assert again.startswith("Please add") and len(state["requests"]) == 1


def test_rewrite_that_drops_a_name_is_discarded(endpoint, tmp_path):
    url, state = endpoint
    state["answer"] = "Please add a function that counts sentences."
    rewriter = InstructionRewriter(url, tmp_path)
    assert rewriter.rewrite(ORIGINAL) == ORIGINAL
    assert rewriter.rejected == 1


def test_a_rewrite_cut_short_is_discarded_on_a_rerun_too(endpoint, tmp_path):
    """Cut at the server's limit, a rewrite may still hold every backticked name."""
    url, state = endpoint
    state["answer"] = "Please add `sentence_count` to `textstats.py` and make sure"
    state["finish_reason"] = "length"
    for _ in range(2):
        rewriter = InstructionRewriter(url, tmp_path)
        assert rewriter.rewrite(ORIGINAL) == ORIGINAL
        assert rewriter.rejected == 1
    assert len(state["requests"]) == 1


def test_unreachable_endpoint_falls_back(tmp_path):
    rewriter = InstructionRewriter("http://127.0.0.1:9/v1", tmp_path, timeout_s=2)
    assert rewriter.rewrite(ORIGINAL) == ORIGINAL
    assert rewriter.errors == 1 and "URLError" in rewriter.last_error


@pytest.mark.timeout(60)
def test_each_endpoint_sends_its_own_system_prompt(endpoint, tmp_path):
    """The test writer's prompt was never sent: every endpoint sent the rewriter's."""
    from repo2rlenv.llm import SYSTEM, TESTS_SYSTEM, TestWriter

    url, state = endpoint
    state["answer"] = GENERATED
    InstructionRewriter(url, tmp_path).rewrite(ORIGINAL)
    TestWriter(url, tmp_path).write("Write roman.py", {"roman.py": "def to_roman(n): ..."})
    assert [r["messages"][0]["content"] for r in state["requests"]] == [SYSTEM, TESTS_SYSTEM]
    assert all("max_tokens" not in r for r in state["requests"])  # notebook endpoints cap


GENERATED = """```python
from roman import to_roman


def test_small():
    assert to_roman(4) == "IV"


def test_large():
    assert to_roman(1994) == "MCMXCIV"
```"""


def test_build_without_agent_tests_gets_llm_tests(endpoint, tmp_path, monkeypatch):
    from repo2rlenv.emit import Draft
    from repo2rlenv.examples.session_stories import ROMAN
    from repo2rlenv.mining.session_miner import MineOptions, SessionPipeline
    from tests.mining.factory import ROOT, SessionBuilder

    url, state = endpoint
    monkeypatch.setenv("REPO2RLENV_CACHE_DIR", str(tmp_path / "cache"))
    session = (
        SessionBuilder()
        .user("Write roman.py with to_roman(number).")
        .write(f"{ROOT}/roman.py", ROMAN)
        .say("Done.")
        .build()
    )
    offline = SessionPipeline(MineOptions(dataset="d", validate_tasks=False, base_image="i"), None)
    assert [e.reason for e in offline.session_events(session, "r", None) if e.kind == "build"] == [
        "build.no-passing-tests"
    ]
    state["answer"] = GENERATED
    online = SessionPipeline(
        MineOptions(dataset="d", validate_tasks=False, base_image="i", llm=url), None
    )
    (draft,) = [
        e
        for e in online.session_events(session, "r", None)
        if isinstance(e, Draft) and e.kind == "build"
    ]
    files = {f.path: f.content.decode() for f in draft.bundle.files}
    assert files["tests/hidden/test_generated.py"].startswith("from roman import to_roman")
    assert json.loads(files["tests/grading.json"])["expected"] == 2
    assert "`to_roman`" in draft.bundle.instruction
    state["answer"] = "I cannot help with that."
    rejected = SessionPipeline(
        MineOptions(dataset="d", validate_tasks=False, base_image="i", llm=url, llm_model="other"),
        None,
    )
    assert [e.reason for e in rejected.session_events(session, "r", None) if e.kind == "build"] == [
        "build.no-tests-written"
    ]
