"""Write the table of measures of ``docs/measures.md`` from the measure registry.

Each family declares its rows beside its kernel (``Family.docs``, ``describe`` at the end
of its module in ``tiecore/measures/``); :func:`tiecore.measures.registry.docs_table`
lays them out, and this script puts that table between the page's two markers.
``tests/test_readme.py`` fails while the page and the registry differ, so run it after
changing a family's rows:

    python scripts/measures_table.py          # rewrite the table in docs/measures.md
    python scripts/measures_table.py --check  # exit 1 (and say so) when it is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's tiecore, whatever the environment installed

from tiecore.measures.registry import docs_table  # noqa: E402

PAGE = ROOT / "docs" / "measures.md"
#: The lines around the generated table in the page.
START = "<!-- written by scripts/measures_table.py from each family's Doc rows: edit those -->"
END = "<!-- end of the generated table -->"


def table_in(text: str) -> str:
    """The table between the page's markers (ValueError without them)."""
    _, start, rest = text.partition(START + "\n")
    table, end, _ = rest.partition(END)
    if not start or not end:
        raise ValueError(f"{PAGE}: no {START!r} ... {END!r} markers")
    return table


def main(argv: list[str]) -> int:
    text = PAGE.read_text(encoding="utf-8")
    old, new = table_in(text), docs_table()
    if "--check" in argv:
        if old != new:
            print(f"{PAGE.name} is stale: run python scripts/measures_table.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(
        text.replace(START + "\n" + old + END, START + "\n" + new + END), encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
