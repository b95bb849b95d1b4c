"""Every install step of the README's two commands retries its downloads.

CI once stopped after 12 s because one 55 MB wheel was cut mid-download six times over one
connection; a `pip install` or an installer module that `make` runs unwrapped would fail
the same way again. The recipes are read as make expands them (`make -n`), so a step added
later without `$(call retry,...)` fails here.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTALL_TARGETS = ("venv", "harbor", "train-deps", "vllm", "harnesses")
DOWNLOADERS = ("pip install", "train.serving.install", "train.harnesses install")

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _expanded_recipes() -> list[str]:
    """The shell lines `make` would run for every install target, forced out of date."""
    result = subprocess.run(
        ["make", "-n", "-B", "-C", str(ROOT), *INSTALL_TARGETS],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout.splitlines()


@pytest.mark.timeout(90)
def test_every_download_step_is_retried():
    lines = [line for line in _expanded_recipes() if any(d in line for d in DOWNLOADERS)]
    assert len(lines) >= 6, lines  # the three venv steps, Harbor, train deps, vLLM, harnesses
    unwrapped = [line for line in lines if "for try in 1 2 3" not in line]
    assert not unwrapped, unwrapped


@pytest.mark.timeout(90)
def test_retry_loop_stops_make_after_the_third_failure(tmp_path):
    """The loop is real shell: a step failing every time exits non-zero after three tries,
    one that fails once succeeds on the second."""
    makefile = (ROOT / "Makefile").read_text()
    retry = next(line for line in makefile.splitlines() if line.startswith("retry = "))
    start = makefile.index(retry)
    definition = makefile[start : makefile.index("done\n", start) + len("done\n")]
    counter = tmp_path / "tries"
    (tmp_path / "Makefile").write_text(
        definition.replace("try * 30", "0")
        + "always:\n\t$(call retry,echo x >> "
        + str(counter)
        + "; false)\n"
        + "once:\n\t$(call retry,echo x >> "
        + str(counter)
        + "; test $$(wc -l < "
        + str(counter)
        + ") -ge 2)\n"
    )
    failing = subprocess.run(
        ["make", "-C", str(tmp_path), "always"], capture_output=True, timeout=60
    )
    assert failing.returncode != 0
    assert counter.read_text().count("x") == 3
    counter.unlink()
    recovering = subprocess.run(
        ["make", "-C", str(tmp_path), "once"], capture_output=True, timeout=60
    )
    assert recovering.returncode == 0, recovering.stderr
    assert counter.read_text().count("x") == 2
