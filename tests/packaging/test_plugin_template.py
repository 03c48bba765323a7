"""``ecc plugins new adapter NAME`` writes a third-party adapter package whose own tests pass as
written (offline: they install it with the environment's own setuptools), and refuses bad input
without writing anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_ecc


def test_the_generated_adapter_s_tests_pass_as_written(tmp_path: Path) -> None:
    target = tmp_path / "work" / "acme-agent"
    made = run_ecc("plugins", "new", "adapter", "acme-agent", "--directory", str(target),
                   "--json", cwd=tmp_path)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout) == {"name": "acme-agent", "directory": str(target)}
    assert (target / "ecc_adapter_acme_agent" / "__init__.py").is_file()
    assert 'acme-agent = "ecc_adapter_acme_agent"' in (target / "pyproject.toml").read_text()

    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PIP_NO_INDEX"] = "1"  # offline, as the brief of the template promises
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=target, env=env,
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "7 passed" in tests.stdout, tests.stdout
    lint = subprocess.run(
        [str(Path(sys.executable).with_name("ruff")), "check", "--no-cache", "--select",
         "E,F,W,I,B,UP", "--line-length", "100", "."],
        cwd=target, capture_output=True, text=True,
    )  # fmt: skip
    assert lint.returncode == 0, lint.stdout


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["Bad_Name"], "invalid adapter name"),
        (["../escape"], "invalid adapter name"),
        (["ok", "--program", "/bin/sh"], "invalid program name"),
    ],
)
def test_bad_names_are_refused_and_nothing_is_written(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = run_ecc("plugins", "new", "adapter", *argv, cwd=work)
    assert result.returncode == 1 and message in result.stderr, result
    assert result.stderr.count("\n") == 1
    assert list(work.iterdir()) == []


def test_an_existing_directory_is_not_overwritten(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "ecc-adapter-acme").mkdir(parents=True)
    (work / "ecc-adapter-acme" / "mine.txt").write_text("keep me\n")
    result = run_ecc("plugins", "new", "adapter", "acme", cwd=work)
    assert result.returncode == 1 and "not empty" in result.stderr, result
    assert sorted(p.name for p in work.rglob("*")) == ["ecc-adapter-acme", "mine.txt"]
    listed = run_ecc("plugins", "--json", cwd=work)  # the listing is still the bare command
    assert listed.returncode == 0 and json.loads(listed.stdout), listed.stderr
