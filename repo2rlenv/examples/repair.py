"""repair: a failing unit test, a one-function fix."""

STATS_BUGGY = '''"""Small statistics helpers."""


def mean(values):
    return sum(values) / len(values)


def median(values):
    ordered = list(values)
    middle = len(ordered) // 2
    return ordered[middle]
'''

TEST_STATS = """import unittest

from stats import mean, median


class StatsTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)

    def test_median_odd(self):
        self.assertEqual(median([3, 1, 2]), 2)

    def test_median_even(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)


if __name__ == "__main__":
    unittest.main()
"""

INSTRUCTION = """Running `python3 -m unittest test_stats` in this project fails: `median` in
`stats.py` returns wrong answers.

Fix `median` so that it returns the middle value of the sorted input, and the mean of
the two middle values when the number of items is even. It must not modify the list it
is given. Do not change the tests.
"""

CHECK = """import importlib.util
import sys
import unittest


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


stats = load("stats", "/workspace/stats.py")
visible = load("test_stats", "/tests/protected/test_stats.py")


class HiddenCases(unittest.TestCase):
    def test_single(self):
        self.assertEqual(stats.median([5]), 5)

    def test_floats(self):
        self.assertEqual(stats.median([1.5, 0.5]), 1.0)

    def test_input_untouched(self):
        data = [9, 1, 5]
        self.assertEqual(stats.median(data), 5)
        self.assertEqual(data, [9, 1, 5])


suite = unittest.TestSuite([
    unittest.defaultTestLoader.loadTestsFromModule(visible),
    unittest.defaultTestLoader.loadTestsFromTestCase(HiddenCases),
])
sys.exit(0 if unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() else 1)
"""

SOLVE = """#!/bin/bash
set -euo pipefail
cat > stats.py <<'PY'
\"\"\"Small statistics helpers.\"\"\"


def mean(values):
    return sum(values) / len(values)


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
PY
"""

WORKSPACE = {"stats.py": STATS_BUGGY, "test_stats.py": TEST_STATS}
PROTECTED = {"test_stats.py": TEST_STATS}
