"""The content of the bundled example sessions: small projects written for this project.

Each story is a list of harness-neutral steps; `session_formats.py` renders them (with
`renderers/`) in the real on-disk formats of Claude Code, pi, Codex, opencode and Hermes.
Steps: ("user", text) | ("say", text) | ("write", path, content) |
("edit", path, old, new) | ("read", path) | ("run", command, output, exit_code).
"""

from __future__ import annotations

TEXTSTATS = '''"""Tiny text statistics."""
import re


def words(text):
    return re.findall(r"[A-Za-z']+", text)


def word_count(text):
    return len(words(text))


def longest_word(text):
    found = words(text)
    return max(found, key=len) if found else ""
'''

TEXTSTATS_TESTS = """from textstats import longest_word, word_count


def test_word_count():
    assert word_count("one two  three") == 3


def test_word_count_empty():
    assert word_count("") == 0


def test_longest_word():
    assert longest_word("a bb ccc dd") == "ccc"


def test_longest_word_empty():
    assert longest_word("") == ""
"""

SENTENCES_OLD = """    return max(found, key=len) if found else ""
"""
SENTENCES_NEW = """    return max(found, key=len) if found else ""


def sentence_count(text):
    return len([part for part in re.split(r"[.!?]+", text) if part.strip()])
"""

SENTENCES_TESTS = """from textstats import sentence_count


def test_sentences():
    assert sentence_count("Hi. How are you? Fine!") == 3


def test_no_sentences():
    assert sentence_count("   ") == 0
"""

STOCK_BUGGY = '''"""Stock levels per warehouse."""


def restock(levels, item, amount):
    levels[item] = levels.get(item, 0) + amount
    return levels


def ship(levels, item, amount):
    if levels.get(item, 0) < amount:
        raise ValueError(f"not enough {item}")
    levels[item] = levels[item] - amount
    return levels


def total(levels):
    return sum(levels)
'''

STOCK_TESTS = """import pytest

from stock import restock, ship, total


def test_restock_new_item():
    assert restock({}, "bolt", 5) == {"bolt": 5}


def test_ship_too_much():
    with pytest.raises(ValueError):
        ship({"nut": 1}, "nut", 2)


def test_total():
    assert total({"bolt": 5, "nut": 3}) == 8
"""

ROMAN = """VALUES = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
          (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def to_roman(number):
    if not 0 < number < 4000:
        raise ValueError("out of range")
    out = []
    for value, letters in VALUES:
        while number >= value:
            out.append(letters)
            number -= value
    return "".join(out)
"""

ROMAN_TESTS = """import pytest

from roman import to_roman


@pytest.mark.parametrize("number, expected", [(1, "I"), (4, "IV"), (9, "IX"), (14, "XIV"),
                                              (1994, "MCMXCIV"), (3999, "MMMCMXCIX")])
def test_to_roman(number, expected):
    assert to_roman(number) == expected


def test_out_of_range():
    with pytest.raises(ValueError):
        to_roman(0)
"""

SLUGIFY_BUGGY = '''import re


def slugify(title):
    """Lower-case words joined by single dashes."""
    return re.sub(r"[^a-z0-9]", "-", title.lower())
'''

SLUGIFY_FIXED = '''import re


def slugify(title):
    """Lower-case words joined by single dashes."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
'''

SLUGIFY_TESTS = """from slug import slugify


def test_simple():
    assert slugify("Hello World") == "hello-world"


def test_punctuation_collapses():
    assert slugify("  Rock & Roll!  ") == "rock-roll"
"""

ORDERS = """order_id,customer,country,status
1001,Ada,Canada,shipped
1002,Ben,France,pending
1003,Chloe,Canada,shipped
1004,Dev,Canada,cancelled
1005,Eve,Japan,shipped
1006,Finn,Canada,shipped
1007,Gus,France,shipped
"""

FAILURES = "=" * 35 + " FAILURES " + "=" * 35 + "\n"

STORIES: dict[str, list[tuple]] = {
    "textstats": [
        (
            "user",
            "Create a small Python module textstats.py with word_count(text) and "
            "longest_word(text). Words are runs of letters and apostrophes. "
            "Add pytest tests and run them.",
        ),
        ("write", "textstats.py", TEXTSTATS),
        ("write", "test_textstats.py", TEXTSTATS_TESTS),
        (
            "run",
            "python -m pytest -q",
            "....                                          [100%]\n4 passed in 0.02s\n",
            0,
        ),
        ("say", "Created textstats.py with both functions; the 4 tests pass."),
        (
            "user",
            "Now add sentence_count(text): the number of sentences, where a sentence "
            "ends with '.', '!' or '?'. Blank text has none.",
        ),
        ("edit", "textstats.py", SENTENCES_OLD, SENTENCES_NEW),
        ("write", "test_sentences.py", SENTENCES_TESTS),
        (
            "run",
            "python -m pytest -q",
            "......                                        [100%]\n6 passed in 0.02s\n",
            0,
        ),
        ("say", "Added sentence_count with two tests; all 6 tests pass."),
    ],
    "stock": [
        ("user", "The tests in this project fail, please fix the bug."),
        ("read", "stock.py", STOCK_BUGGY),
        ("read", "test_stock.py", STOCK_TESTS),
        (
            "run",
            "python -m pytest -q",
            "..F                                           [100%]\n"
            + FAILURES
            + "______________________________ "
            "test_total ______________________________\n\n    def test_total():\n>       assert "
            'total({"bolt": 5, "nut": 3}) == 8\nE       TypeError: unsupported operand type(s) '
            "for +: 'int' and 'str'\n\ntest_stock.py:16: TypeError\n=========================== "
            "short test summary info ============================\nFAILED test_stock.py::test_total"
            " - TypeError: unsupported operand type(s) for +: 'int' and 'str'\n1 failed, 2 passed "
            "in 0.03s\n",
            1,
        ),
        ("edit", "stock.py", "    return sum(levels)\n", "    return sum(levels.values())\n"),
        (
            "run",
            "python -m pytest -q",
            "...                                           [100%]\n3 passed in 0.02s\n",
            0,
        ),
        ("say", "total() summed the keys instead of the quantities; fixed, 3 tests pass."),
    ],
    "roman": [
        (
            "user",
            "Write roman.py with to_roman(number) converting 1..3999 to Roman numerals "
            "(ValueError outside that range), plus pytest tests.",
        ),
        ("write", "roman.py", ROMAN),
        ("write", "test_roman.py", ROMAN_TESTS),
        (
            "run",
            "python3 -m pytest test_roman.py -q",
            ".......                                       [100%]\n7 passed in 0.03s\n",
            0,
        ),
        ("say", "Done: roman.py and 7 passing tests."),
    ],
    "slug": [
        ("user", "slugify gives ugly results for titles with punctuation. Fix it."),
        ("run", "cat slug.py", SLUGIFY_BUGGY, 0),
        ("run", "cat test_slug.py", SLUGIFY_TESTS, 0),
        (
            "run",
            "python -m pytest -q test_slug.py",
            ".F                                            [100%]\n"
            + FAILURES
            + "E       AssertionError: assert "
            "'--rock---roll--' == 'rock-roll'\nFAILED test_slug.py::test_punctuation_collapses - "
            "AssertionError\n1 failed, 1 passed in 0.02s\n",
            1,
        ),
        ("write", "slug.py", SLUGIFY_FIXED),
        (
            "run",
            "python -m pytest -q test_slug.py",
            "..                                            [100%]\n2 passed in 0.01s\n",
            0,
        ),
        ("say", "Runs of non-alphanumerics now collapse to one dash and edges are trimmed."),
    ],
    "orders": [
        ("user", "How many orders in orders.csv were shipped to Canada?"),
        ("run", "cat orders.csv", ORDERS, 0),
        ("run", "grep -c ',Canada,shipped' orders.csv", "3\n", 0),
        ("say", "3 orders were shipped to Canada (1001, 1003 and 1006)."),
    ],
    "chat-only": [
        ("user", "What is the difference between a list and a tuple in Python?"),
        ("say", "Lists are mutable, tuples are not; tuples can be dictionary keys."),
    ],
    "outside-root": [
        ("user", "Add my machine name to the hosts file and save a note."),
        ("run", "cat /etc/hostname", "devbox\n", 0),
        ("write", "/etc/hosts", "127.0.0.1 devbox\n"),
        ("write", "../notes.txt", "hosts updated\n"),
        ("say", "Updated /etc/hosts."),
    ],
}
