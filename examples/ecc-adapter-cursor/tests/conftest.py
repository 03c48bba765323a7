"""Install this package the way a user would (pip), into a throwaway target directory.

The install happens when pytest loads this conftest, before the test modules import
``ecc_adapter_cursor``; the directory is put on ``sys.path`` for these imports and on
``PYTHONPATH`` for the ``python -m ecc`` subprocesses of these tests only, so ecc finds the
entry point exactly as after ``pip install examples/ecc-adapter-cursor``, without touching the
developer's environment or other tests. Offline: the build uses the venv's own setuptools.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent
TARGET = Path(tempfile.mkdtemp(prefix="ecc-cursor-site-"))
atexit.register(shutil.rmtree, TARGET, True)

subprocess.run(
    [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
     "--no-index", "--target", str(TARGET), str(PACKAGE)],
    check=True,
)  # fmt: skip
sys.path.insert(0, str(TARGET))


@pytest.fixture(autouse=True)
def on_pythonpath(monkeypatch: pytest.MonkeyPatch) -> None:
    joined = os.pathsep.join(filter(None, [str(TARGET), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", joined)
