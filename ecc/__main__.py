"""``python -m ecc``: the same entry point as the ``ecc`` console script (used by the runner)."""

from ecc.entry import main  # the same fast paths as the console script

if __name__ == "__main__":
    main()
