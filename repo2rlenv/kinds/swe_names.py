"""Names in an instance row's test lists that address no test the verifier can run.

Apart from `instance_repair` because a row's names are SWE-bench's log parser's output,
read here as data: most are pytest node ids, a few are artefacts of the parser.
"""

from __future__ import annotations

from collections.abc import Collection


def addressless(names: list[str], files: Collection[str]) -> list[str]:
    """Names of a row that address no test: SWE-bench's pytest log parser took a
    progress mark (`[100%]`, 2 of the 500 Verified rows) or a test of a pytester run's
    own output (`test_capsysbinary.py::test_hello`, a file neither the checkout nor the
    test patch has: pytest-7521) for one. Given to pytest, the first collected the whole
    checkout and the second stopped the run (`file not found`); no runner reports them.
    The verifier leaves them out, and the task lists them (`swe.addressless_tests`)."""
    return [
        name
        for name in names
        if not name.partition("[")[0].strip() or ("::" in name and name.split("::")[0] not in files)
    ]
