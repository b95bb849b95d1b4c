"""qa: a question whose answer is read off the project, graded by value, not wording."""

DEFAULTS = """[server]
host = "0.0.0.0"
port = 8080
workers = 2
"""

DEVELOPMENT = """[server]
port = 5000
"""

PRODUCTION = """[server]
workers = 8
port = 9443
"""

APP = '''"""Loads configuration: defaults first, then the file named by APP_ENV on top."""

import os
import tomllib
from pathlib import Path

CONFIG = Path(__file__).parent / "config"


def settings():
    merged = tomllib.loads((CONFIG / "defaults.toml").read_text())
    env = os.environ.get("APP_ENV", "development")
    overlay = tomllib.loads((CONFIG / f"{env}.toml").read_text())
    merged["server"].update(overlay.get("server", {}))
    return merged
'''

INSTRUCTION = """This folder holds a small service and its configuration.

When the service runs with `APP_ENV=production`, which TCP port does it listen on, and
how many workers does it start?

Write the answer to `answer.txt` in the current folder as two lines:
`port=<number>` and `workers=<number>`.
"""

CHECK = """import re
import sys
from pathlib import Path

EXPECTED = {"port": 9443, "workers": 8}
try:
    text = Path("/workspace/answer.txt").read_text()
except OSError as exc:
    sys.exit(f"no answer: {exc}")
found = {}
for line in text.splitlines():
    match = re.fullmatch(r"\\s*(port|workers)\\s*[=:]\\s*(\\d+)\\s*", line)
    if match:
        found[match.group(1)] = int(match.group(2))
print("found", found, "expected", EXPECTED)
sys.exit(0 if found == EXPECTED else 1)
"""

SOLVE = """#!/bin/bash
set -euo pipefail
printf 'port=9443\\nworkers=8\\n' > answer.txt
"""

WORKSPACE = {
    "service/app.py": APP,
    "service/config/defaults.toml": DEFAULTS,
    "service/config/development.toml": DEVELOPMENT,
    "service/config/production.toml": PRODUCTION,
}
PROTECTED: dict[str, str] = {}
