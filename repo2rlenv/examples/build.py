"""build: a small program from an empty folder."""

INSTRUCTION = """Create a command-line program `wordfreq.py` in the current folder.

It reads English text from standard input and prints the three most frequent words, one
per line, as `<word> <count>`, most frequent first. Words are maximal runs of ASCII
letters, compared case-insensitively and printed in lower case. Break ties
alphabetically. If there are fewer than three distinct words, print all of them; empty
input prints nothing.

It is run as `python3 wordfreq.py < input.txt`.
"""

CHECK = """import subprocess
import sys

CASES = [
    ("the cat and the hat. The END", ["the 3", "and 1", "cat 1"]),
    ("b a B a c", ["a 2", "b 2", "c 1"]),
    ("Hello, hello... HELLO? world", ["hello 3", "world 1"]),
    ("", []),
    ("x1y2z 42 x", ["x 2", "y 1", "z 1"]),
]

failed = 0
for text, expected in CASES:
    run = subprocess.run([sys.executable, "/workspace/wordfreq.py"], input=text,
                         capture_output=True, text=True, timeout=20, cwd="/workspace")
    got = [line.rstrip() for line in run.stdout.splitlines() if line.strip()]
    ok = run.returncode == 0 and got == expected
    failed += not ok
    print(("PASS" if ok else "FAIL"), repr(text), "->", got, "expected", expected)
sys.exit(1 if failed else 0)
"""

SOLVE = """#!/bin/bash
set -euo pipefail
cat > wordfreq.py <<'PY'
import re
import sys
from collections import Counter

counts = Counter(word.lower() for word in re.findall(r"[A-Za-z]+", sys.stdin.read()))
for word, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:3]:
    print(f"{word} {count}")
PY
"""

WORKSPACE: dict[str, str] = {}
PROTECTED: dict[str, str] = {}
