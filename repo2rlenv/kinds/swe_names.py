"""Names in an instance row's test lists that address no test the verifier can run.

Apart from `instance_repair` because a row's names are SWE-bench's log parser's output,
read here as data: most are pytest node ids, a few are artefacts of the parser.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence


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


def files_to_run(names: Sequence[str], patch_order: Sequence[str]) -> list[str]:
    """The files the verifier runs whole: each file a row's name is in, once, in the order
    the test patch lists them, then the others in the row's order.

    SWE-bench's harness runs an instance's test files whole (`pytest -rA <files>`, its
    directives from the test patch) and its rows record what that run reported. A
    subset of the tests is another run: Sphinx's test apps of one test root share a
    build, and sphinx-8721's `test_viewcode_epub_enabled` passes only after
    `test_viewcode`, which the row does not name, has built (measured on its reference:
    the row's four tests 3 of 4, the file 5 of 5). The row's names still decide the reward
    (`named_results`); the other tests of the files only run. They cost little: a row's
    PASS_TO_PASS lists nearly every test of its files."""
    files = list(dict.fromkeys(name.partition("::")[0].partition("[")[0] for name in names))
    rank = {path: i for i, path in enumerate(patch_order)}
    return sorted(files, key=lambda path: rank.get(path, len(rank)))  # stable: row order
