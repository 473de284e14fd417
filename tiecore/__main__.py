"""``python -m tiecore``: the same as the ``tiecore`` command."""

from tiecore.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
