"""Real git repositories and the sessions that worked inside them, in three harness formats.

Each repository has a start commit and, after it, a commit with the fix (its message
carries LEAK_MARKER): a task image that held any history past the start would contain it.
`calc` is a flat MIT-licensed project; `inventory` is a src-layout project with no
licence that only imports after `pip install -e .`.

- Codex rollout with `session_meta.git`, on calc: repair (turn 1) and extend (turn 2).
- ATIF (OpenHands tools) with repository/commit in `extra`, on inventory: extend.
- Claude Code that printed `git rev-parse HEAD` and `git remote -v`, on inventory, with
  an uncommitted README edit shown by `git status` + `git diff`: repair.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import git

from repo2rlenv.examples.renderers.claude_code import claude_code
from repo2rlenv.examples.renderers.clock import ROOT
from repo2rlenv.examples.renderers.codex import codex

LEAK_MARKER = "RLENV-FIX-COMMIT-MUST-NOT-LEAK"
CALC_URL = "https://github.com/example/calc"
INVENTORY_URL = "https://github.com/example/inventory"
MIT = (
    "MIT License\n\nCopyright (c) 2026 Example\n\nPermission is hereby granted, free of "
    "charge, to any person obtaining a copy of this software.\n"
)

CALC_BUGGY = "def add(a, b):\n    return a - b\n\n\ndef double(x):\n    return add(x, x)\n"
CALC_FIXED = CALC_BUGGY.replace("a - b", "a + b")
CALC_WITH_MUL = CALC_FIXED + "\n\ndef mul(a, b):\n    return a * b\n"
CALC_TESTS = (
    "from calc import add, double\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_double():\n    assert double(4) == 8\n"
)
MUL_TESTS = (
    "from calc import mul\n\n\ndef test_mul():\n    assert mul(3, 4) == 12\n\n\n"
    "def test_mul_zero():\n    assert mul(5, 0) == 0\n"
)

PYPROJECT = (
    '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
    '[project]\nname = "inventory"\nversion = "0.1.0"\n'
)
STOCK_BUGGY = """class Stock:
    def __init__(self):
        self.items = {}

    def add(self, name, n=1):
        self.items[name] = self.items.get(name, 0) + n

    def remove(self, name, n=1):
        self.items[name] = self.items.get(name, 0) - n

    def count(self, name):
        return self.items.get(name, 0)
"""
REMOVE_FIXED = (
    "    def remove(self, name, n=1):\n        if self.items.get(name, 0) < n:\n"
    '            raise ValueError(f"only {self.items.get(name, 0)} {name} left")\n'
    "        self.items[name] = self.items.get(name, 0) - n\n"
)
REMOVE_BUGGY = (
    "    def remove(self, name, n=1):\n        self.items[name] = self.items.get(name, 0) - n\n"
)
STOCK_TESTS = """import pytest

from inventory.stock import Stock


def test_add():
    stock = Stock()
    stock.add("apple", 3)
    assert stock.count("apple") == 3


def test_remove_too_many():
    stock = Stock()
    stock.add("apple", 1)
    with pytest.raises(ValueError):
        stock.remove("apple", 2)
"""
RESTOCK_TESTS = """from inventory.stock import Stock


def test_restock_fills_to_level():
    stock = Stock()
    stock.add("pear", 2)
    stock.restock("pear", 10)
    assert stock.count("pear") == 10


def test_restock_never_lowers():
    stock = Stock()
    stock.add("pear", 12)
    stock.restock("pear", 10)
    assert stock.count("pear") == 12
"""
RESTOCK = (
    "\n    def restock(self, name, level):\n"
    "        self.items[name] = max(self.items.get(name, 0), level)\n"
)
README_DIFF = """diff --git a/README.md b/README.md
index 3b18e51..a7b1c0d 100644
--- a/README.md
+++ b/README.md
@@ -1 +1,3 @@
 # inventory
+
+Track stock levels per item.
"""
PIP_E = (
    "Obtaining file:///home/dev/projects/inventory\n  Installing build dependencies: started\n"
    "Successfully built inventory\nInstalling collected packages: inventory\n"
    "Successfully installed inventory-0.1.0\n"
)


@dataclass(frozen=True)
class Repo:
    path: Path
    start: str
    fix: str
    url: str


def _commit(repo: git.Repo, files: dict[str, str], message: str) -> str:
    root = Path(repo.working_tree_dir)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    repo.index.add(sorted(files))
    actor = git.Actor("Dev", "dev@example.com")
    return repo.index.commit(message, author=actor, committer=actor).hexsha


def make_repos(where: Path) -> dict[str, Repo]:
    calc = git.Repo.init(where / "calc")
    start = _commit(
        calc,
        {
            "calc.py": CALC_BUGGY,
            "test_calc.py": CALC_TESTS,
            "LICENSE": MIT,
            "README.md": "# calc\n",
        },
        "calc: add and double",
    )
    fix = _commit(calc, {"calc.py": CALC_WITH_MUL}, f"{LEAK_MARKER}: add adds, mul")
    inventory = git.Repo.init(where / "inventory")
    inv_start = _commit(
        inventory,
        {
            "pyproject.toml": PYPROJECT,
            "README.md": "# inventory\n",
            "src/inventory/__init__.py": "",
            "src/inventory/stock.py": STOCK_BUGGY,
            "tests/test_stock.py": STOCK_TESTS,
        },
        "inventory: stock levels",
    )
    inv_fix = _commit(
        inventory,
        {"src/inventory/stock.py": STOCK_BUGGY.replace(REMOVE_BUGGY, REMOVE_FIXED) + RESTOCK},
        f"{LEAK_MARKER}: remove refuses, restock",
    )
    return {
        "calc": Repo(where / "calc", start, fix, CALC_URL),
        "inventory": Repo(where / "inventory", inv_start, inv_fix, INVENTORY_URL),
    }


def _heredoc(path: str, text: str) -> str:
    return f"cat > {path} <<'EOF'\n{text}EOF"


def codex_calc(repo: Repo) -> str:
    story = [
        ("user", "The tests fail. Please fix add() in calc.py."),
        ("run", "python -m pytest -q", "F.\n1 failed, 1 passed in 0.02s\n", 1),
        ("run", _heredoc("calc.py", CALC_FIXED), "", 0),
        ("run", "python -m pytest -q", "..\n2 passed in 0.01s\n", 0),
        ("say", "add() subtracted; fixed."),
        ("user", "Add a mul(a, b) function to calc.py, with tests in test_mul.py."),
        ("run", _heredoc("test_mul.py", MUL_TESTS), "", 0),
        ("run", _heredoc("calc.py", CALC_WITH_MUL), "", 0),
        ("run", "python -m pytest -q", "....\n4 passed in 0.02s\n", 0),
        ("say", "mul() added with two tests."),
    ]
    lines = [json.loads(line) for line in codex("calc", story).splitlines()]
    lines[0]["payload"]["git"] = {
        "repository_url": "git@github.com:example/calc.git",
        "commit_hash": repo.start,
        "branch": "main",
    }
    return "".join(json.dumps(line) + "\n" for line in lines)


def atif_inventory(repo: Repo) -> str:
    steps: list[dict] = []

    def user(text: str) -> None:
        steps.append({"step_id": len(steps) + 1, "source": "user", "message": text})

    def call(name: str, arguments: dict, output: str, exit_code: int | None = None) -> None:
        ident = f"call_{len(steps) + 1}"
        if exit_code is not None:
            output = f"OBSERVATION:\n{output}\n[Command finished with exit code {exit_code}]"
        steps.append(
            {
                "step_id": len(steps) + 1,
                "source": "agent",
                "message": "",
                "tool_calls": [
                    {"tool_call_id": ident, "function_name": name, "arguments": arguments}
                ],
                "observation": {"results": [{"source_call_id": ident, "content": output}]},
            }
        )

    user("Install the project and run its tests.")
    call("execute_bash", {"command": "pip install -e ."}, PIP_E, 0)
    call(
        "execute_bash",
        {"command": "python -m pytest -q tests/test_stock.py::test_add"},
        ".\n1 passed in 0.01s",
        0,
    )
    user(
        "Add Stock.restock(name, level) that raises an item's count to at least level, "
        "with tests in tests/test_restock.py."
    )
    call(
        "str_replace_editor",
        {"command": "create", "path": "tests/test_restock.py", "file_text": RESTOCK_TESTS},
        "File created successfully.",
    )
    call(
        "str_replace_editor",
        {
            "command": "str_replace",
            "path": "src/inventory/stock.py",
            "old_str": "        return self.items.get(name, 0)\n",
            "new_str": "        return self.items.get(name, 0)\n" + RESTOCK,
        },
        "The file src/inventory/stock.py has been edited.",
    )
    call(
        "execute_bash",
        {"command": "python -m pytest -q tests/test_restock.py"},
        "..\n2 passed in 0.01s",
        0,
    )
    document = {
        "schema_version": "ATIF-v1.6",
        "session_id": "inventory-restock",
        "agent": {"name": "openhands", "version": "0.50"},
        "steps": steps,
        "extra": {"repository": INVENTORY_URL + ".git", "base_commit": repo.start},
    }
    return json.dumps(document, indent=2) + "\n"


def claude_inventory(repo: Repo) -> str:
    root = ROOT.format(name="inventory")
    story = [
        ("user", "Stock.remove lets counts go negative; it must raise ValueError instead."),
        ("run", "git rev-parse HEAD", repo.start + "\n", 0),
        (
            "run",
            "git remote -v",
            "origin\thttps://github.com/example/inventory (fetch)\n"
            "origin\thttps://github.com/example/inventory (push)\n",
            0,
        ),
        (
            "run",
            "git status",
            "On branch main\nChanges not staged for commit:\n"
            '  (use "git add <file>..." to update what will be committed)\n'
            "\tmodified:   README.md\n\n"
            'no changes added to commit (use "git add" and/or "git commit -a")\n',
            0,
        ),
        ("run", "git diff", README_DIFF, 0),
        ("run", "pip install -e .", PIP_E.replace("/home/dev/projects/inventory", root), 0),
        ("run", "python -m pytest -q tests", ".F\n1 failed, 1 passed in 0.03s\n", 1),
        ("edit", "src/inventory/stock.py", REMOVE_BUGGY, REMOVE_FIXED),
        ("run", "python -m pytest -q tests", "..\n2 passed in 0.02s\n", 0),
        ("say", "remove() now raises ValueError when stock is short."),
    ]
    return claude_code("inventory", story)


def write_sessions(repos: dict[str, Repo], out: Path) -> dict[str, Path]:
    files = {
        "codex/calc.jsonl": codex_calc(repos["calc"]),
        "atif/inventory.json": atif_inventory(repos["inventory"]),
        "claude_code/inventory.jsonl": claude_inventory(repos["inventory"]),
    }
    written = {}
    for rel, text in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
        written[rel] = out / rel
    return written


def write_repo_map(repos: dict[str, Repo], path: Path) -> Path:
    path.write_text(json.dumps({r.url: str(r.path) for r in repos.values()}, indent=2))
    return path
