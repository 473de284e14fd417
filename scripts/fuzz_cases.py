"""The fuzz suite's case count by family and verdict (tests/io/test_fuzz.py).

Runs the fuzz tests (both tiers, CI's fixed examples) with ``TIECORE_FUZZ_REPORT`` set
and prints a table: per test (family), the command lines that gave values and those
that gave one error line.  Usage: ``python scripts/fuzz_cases.py [pytest args]``.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "cases.jsonl"
        env = {**os.environ, "TIECORE_FUZZ_REPORT": str(report), "CI": "true"}
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-m", "", "-p", "no:randomly",
             "tests/io/test_fuzz.py", *argv],
            cwd=ROOT, env=env, check=False,
        )  # fmt: skip
        counts: collections.Counter = collections.Counter()
        if report.exists():
            for line in report.read_text().splitlines():
                for family, verdict, n in json.loads(line):
                    counts[family, verdict] += n
    verdicts = sorted({verdict for _, verdict in counts})
    families = sorted({family for family, _ in counts})
    print("| family | " + " | ".join(verdicts) + " | total |")
    print("|---|" + "---:|" * (len(verdicts) + 1))
    for family in families:
        cells = [counts[family, verdict] for verdict in verdicts]
        print(f"| {family} | " + " | ".join(map(str, cells)) + f" | {sum(cells)} |")
    cells = [sum(counts[f, verdict] for f in families) for verdict in verdicts]
    print("| all | " + " | ".join(map(str, cells)) + f" | {sum(cells)} |")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
