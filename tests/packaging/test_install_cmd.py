"""``ecc install`` / ``ecc uninstall`` put plugins into the environment ecc runs from, with pip.

The environment is a real venv of its own (pip from ensurepip), which sees ecc and its
dependencies through a ``.pth`` file: the shared development venv is never installed into.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import REPO

PLUGIN = "ecc-notifier-pigeon"
PYPROJECT = f"""\
[build-system]
requires = ["setuptools>=64", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "{PLUGIN}"
version = "1.0"

[project.entry-points."ecc.notifiers"]
pigeon = "ecc_notifier_pigeon"
"""


def own_env(where: Path, *, with_pip: bool = True) -> Path:
    """A venv whose site-packages also reads the development venv's (ecc and its dependencies)."""
    command = [sys.executable, "-m", "venv", str(where)]
    subprocess.run(command if with_pip else [*command, "--without-pip"], check=True)
    purelib = sysconfig.get_path("purelib", vars={"base": str(where), "platbase": str(where)})
    lines = f"import site; site.addsitedir({site.getsitepackages()[0]!r})\n"
    if not with_pip:  # as in a `uv tool` environment: the development venv's pip must not show
        lines += "import sys; sys.modules['pip'] = None\n"
    (Path(purelib) / "zz-ecc-under-test.pth").write_text(lines)
    return where / "bin" / "python"


def ecc(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PIP_NO_INDEX"] = "1"  # nothing here may reach a package index
    return subprocess.run(
        [str(python), "-m", "ecc", *args], cwd=cwd, capture_output=True, text=True, env=env,
        timeout=120,
    )  # fmt: skip


@pytest.fixture(scope="module")
def pigeon_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("pigeon")
    (source / "pyproject.toml").write_text(PYPROJECT)
    (source / "ecc_notifier_pigeon.py").write_text(
        "from ecc.contract.hookspecs import hookimpl\n\n\n"
        "@hookimpl\ndef ecc_notify(notification, settings):\n    return None\n"
    )
    wheels = tmp_path_factory.mktemp("pigeon-wheels")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--wheel-dir", str(wheels), str(source)],
        check=True, cwd=source,
    )  # fmt: skip
    return next(wheels.glob("*.whl"))


@pytest.fixture(scope="module")
def pip_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return own_env(tmp_path_factory.mktemp("pip-env") / "env")


def notifiers(python: Path, cwd: Path) -> set[str]:
    listed = json.loads(ecc(python, "plugins", "--json", cwd=cwd).stdout)
    return {row["name"] for row in listed if row["group"] == "ecc.notifiers"}


def test_install_and_uninstall_a_plugin_in_ecc_s_own_environment(
    tmp_path: Path, pigeon_wheel: Path, pip_env: Path
) -> None:
    python = pip_env
    assert "pigeon" not in notifiers(python, tmp_path)

    installed = ecc(python, "install", str(pigeon_wheel), cwd=tmp_path)
    assert installed.returncode == 0, installed
    assert list(python.parent.parent.glob(f"lib/python*/site-packages/{PLUGIN.replace('-', '_')}*"))
    assert "pigeon" in notifiers(python, tmp_path)

    removed = ecc(python, "uninstall", "-y", PLUGIN, cwd=tmp_path)
    assert removed.returncode == 0, removed
    assert "pigeon" not in notifiers(python, tmp_path)


@pytest.mark.parametrize("name", ["ecc-control-plane", "ECC_Control.Plane[tui]", "ecc"])
def test_uninstall_refuses_ecc_itself(tmp_path: Path, name: str) -> None:
    result = ecc(Path(sys.executable), "uninstall", "-y", "ecc-adapter-claude", name, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "not ecc itself" in result.stderr, result.stderr
    assert (REPO / "adapters" / "claude").is_dir()  # nothing was touched


def test_install_fails_with_pip_s_status_and_without_pip_says_what_to_do(
    tmp_path: Path, pip_env: Path
) -> None:
    missing = ecc(pip_env, "install", "ecc-no-such-plugin-anywhere", cwd=tmp_path)
    assert missing.returncode != 0 and "Traceback" not in missing.stderr, missing

    bare = own_env(tmp_path / "bare", with_pip=False)
    result = ecc(bare, "install", "ecc-adapter-claude", cwd=tmp_path)
    assert result.returncode == 1
    assert "has no pip" in result.stderr and "uv tool install" in result.stderr, result.stderr
    assert ecc(bare, "install", cwd=tmp_path).returncode == 2  # a usage error
