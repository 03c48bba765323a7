"""``python -m ecc``: the same entry point as the ``ecc`` console script (used by the runner)."""

from ecc.cli import main

if __name__ == "__main__":
    main()
