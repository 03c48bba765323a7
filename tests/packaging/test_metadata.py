"""Every distribution of the project can be published: a name of its own on PyPI (``ecc`` there is
an unrelated library), one version, floors that work, extras, and complete metadata."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path
from typing import Any

import pytest

from ecc import __version__
from tests.conftest import REPO

CORE = "ecc-control-plane"
MEMBERS = ["adapters/claude", "adapters/codex", "adapters/gemini", "adapters/opencode"]
PLUGINS = ["plugins/ecc-celery", "plugins/ecc-otel", "plugins/ecc-semantic"]
EXTRAS = {"mcp", "tui", "remote", "web", "celery", "otel", "semantic", "claude", "codex", "gemini",
          "opencode", "all"}  # fmt: skip


def project(folder: str) -> dict[str, Any]:
    return tomllib.loads((REPO / folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def requirement(requirements: list[str], name: str) -> str:
    found = [r for r in requirements if re.match(rf"{re.escape(name)}(\[|[<>=~!; ]|$)", r)]
    assert len(found) == 1, (name, requirements)
    return found[0]


def admits(spec: str, version: str) -> bool:
    """Whether ``>=A,<B`` (the only shape the project uses) admits ``version``."""
    numbers = tuple(int(part) for part in version.split("."))
    ok = True
    for clause in spec.split(","):
        match = re.fullmatch(r"\s*(>=|<)\s*([\d.]+)\s*", clause)
        assert match, f"unexpected clause {clause!r} in {spec!r}"
        bound = tuple(int(part) for part in match.group(2).split("."))
        ok &= numbers >= bound if match.group(1) == ">=" else numbers < bound
    return ok


def test_the_core_has_a_name_of_its_own_and_one_version() -> None:
    core = project(".")
    assert core["name"] == CORE
    assert "version" not in core and "version" in core["dynamic"]
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["dynamic"]["version"] == {"attr": "ecc.__version__"}
    assert core["scripts"]["ecc"] == "ecc.entry:main"  # the command stays `ecc`


@pytest.mark.parametrize("folder", MEMBERS + PLUGINS)
def test_every_member_depends_on_the_core_by_its_name_in_a_compatible_range(folder: str) -> None:
    member = project(folder)
    assert member["version"] == __version__, "first-party distributions move in lockstep"
    spec = requirement(member["dependencies"], CORE)[len(CORE) :]
    assert "<" in spec and admits(spec, __version__), spec
    assert not any(re.match(r"ecc([<>=~!\[ ]|$)", dep) for dep in member["dependencies"])


def test_the_core_is_small_and_every_front_is_an_extra() -> None:
    core = project(".")
    names = {re.split(r"[<>=~!\[; ]", dep, maxsplit=1)[0].lower() for dep in core["dependencies"]}
    heavy = {"mcp", "textual", "fastapi", "uvicorn", "jinja2", "celery", "opentelemetry-sdk"}
    assert not names & heavy, names
    extras = core["optional-dependencies"]
    assert set(extras) >= EXTRAS
    assert requirement(extras["mcp"], "mcp") == "mcp>=2"  # mcp.server.mcpserver is new in 2
    everything = requirement(extras["all"], CORE)
    assert set(everything[everything.index("[") + 1 : everything.index("]")].split(",")) == (
        EXTRAS - {"all"}
    )
    for folder in MEMBERS + PLUGINS:
        name = project(folder)["name"]
        extra = name.removeprefix("ecc-adapter-").removeprefix("ecc-")
        assert admits(requirement(extras[extra], name)[len(name) :], __version__), name


@pytest.mark.parametrize("folder", [".", *MEMBERS, *PLUGINS, "examples/ecc-adapter-cursor"])
def test_every_distribution_has_complete_metadata(folder: str) -> None:
    meta = project(folder)
    for key in ("description", "readme", "license", "authors", "keywords", "classifiers"):
        assert meta.get(key), f"{folder}: no {key}"
    # an SPDX expression and the file (PEP 639): setuptools deprecates the table and the
    # license classifiers, and stops building them in 2027
    assert meta["license"] == "MIT" and meta["license-files"] == ["LICENSE"], folder
    assert not [c for c in meta["classifiers"] if c.startswith("License ::")], folder
    assert meta.get("urls"), f"{folder}: no urls"
    assert (REPO / folder / meta["readme"]).is_file()
    assert "MIT License" in (REPO / folder / "LICENSE").read_text(encoding="utf-8")


def test_the_changelog_names_this_version() -> None:
    assert f"## {__version__}" in (REPO / "CHANGELOG.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("folder", MEMBERS)
def test_adapter_sdists_carry_the_samples_their_tests_read(folder: str, tmp_path: Path) -> None:
    from tests.packaging.test_wheels import copy_source

    source = copy_source(folder, tmp_path)
    build = "from setuptools import build_meta as b; print(b.build_sdist('dist'))"
    name = subprocess.run(
        [sys.executable, "-c", build], cwd=source, check=True, capture_output=True, text=True
    ).stdout.split()[-1]
    with tarfile.open(source / "dist" / name) as sdist:
        members = {Path(*Path(member).parts[1:]).as_posix() for member in sdist.getnames()}
    samples = {
        path.relative_to(REPO / folder).as_posix()
        for path in (REPO / folder / "tests" / "samples").rglob("*")
        if path.is_file()
    }
    assert samples and samples <= members, samples - members
    assert {"LICENSE", "README.md"} <= members


def test_the_version_is_written_once_in_the_core(tmp_path: Path) -> None:
    written = [
        path.relative_to(REPO).as_posix()
        for path in [REPO / "pyproject.toml", *REPO.glob("ecc/**/*.py")]
        if re.search(rf"['\"]{re.escape(__version__)}['\"]", path.read_text(encoding="utf-8"))
    ]
    assert written == ["ecc/__init__.py"], written
