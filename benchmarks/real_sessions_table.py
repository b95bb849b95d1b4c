"""The per-file yield table of docs/real-sessions.md: mine each session file of a folder on
its own with `repo2rlenv mine` and print one markdown row per file (format, tasks per
kind, skip reasons), then every emitted task's folder for the one-line reviews.

    python benchmarks/real_sessions_table.py FOLDER [--validate] [--out DIR]

Without --validate the miner runs with --no-validate (no Docker). Each file is mined
alone, so duplicates across files are not detected here; mine the folder as a whole for
that. The rows are sorted by path, so two runs over the same files print the same table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

SUFFIXES = (".jsonl", ".json", ".parquet")


def _mine(path: Path, out: Path, validate: bool) -> dict:
    report = out / "yield.json"
    command = [sys.executable, "-m", "repo2rlenv", "mine", "-q", "--dataset", str(path)]
    command += ["--out", str(out / "tasks"), "--json", str(report)]
    if not validate:
        command.append("--no-validate")
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return json.loads(report.read_text())


def _row(rel: str, report: dict) -> str:
    formats = sorted({*report["skipped_by_format"], *report["emitted_by_format"]}) or ["-"]
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(report["emitted_by_kind"].items())) or "0"
    skips = Counter(report["skipped"])
    reasons = ", ".join(f"{r} x{n}" for r, n in sorted(skips.items(), key=lambda i: (-i[1], i[0])))
    return f"| {rel} | {', '.join(formats)} | {kinds} | {reasons or '-'} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--validate", action="store_true", help="run the Docker oracle check")
    parser.add_argument("--out", type=Path, help="keep the mined tasks here")
    args = parser.parse_args()
    files = sorted(p for p in args.folder.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
    with tempfile.TemporaryDirectory(prefix="real-sessions-") as scratch:
        base = args.out or Path(scratch)
        rows, tasks = [], []
        for index, path in enumerate(files):
            out = base / f"{index:03d}"
            out.mkdir(parents=True, exist_ok=True)
            rel = path.relative_to(args.folder).as_posix()
            rows.append(_row(rel, _mine(path, out, args.validate)))
            manifest = out / "tasks" / "manifest.jsonl"
            if manifest.exists():
                for line in manifest.read_text().splitlines():
                    tasks.append(f"- {rel}: {json.loads(line)['path']}")
    print("| file | format | tasks per kind | skip reasons |")
    print("|---|---|---|---|")
    print("\n".join(rows))
    if tasks:
        print("\nEmitted tasks:\n" + "\n".join(tasks))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
