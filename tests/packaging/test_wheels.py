"""Every distribution built into a wheel and installed as a user would: into a fresh virtual
environment, not editable, offline (the built wheels plus the wheelhouse ``make install`` fills
with the dependencies' wheels), then the smoke set run from that environment alone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ecc import __version__
from tests.conftest import REPO

pytestmark = pytest.mark.slow

SOURCES = [".", "adapters/claude", "adapters/codex", "adapters/gemini", "adapters/opencode",
           "plugins/ecc-celery", "plugins/ecc-otel", "plugins/ecc-semantic"]  # fmt: skip
WHEELHOUSE = Path(sys.prefix) / "wheelhouse"
UV = Path(sys.executable).with_name("uv")


def copy_source(folder: str, into: Path) -> Path:
    """The distribution's files (tracked or new, not ignored), away from the shared tree."""
    source = REPO / folder
    tracked = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
            cwd=source,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    target = into / (folder.replace("/", "-") if folder != "." else "core")
    for name in filter(None, tracked):
        if (source / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / name, target / name)
    return target


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert WHEELHOUSE.is_dir(), f"no wheelhouse at {WHEELHOUSE}: run `make wheelhouse`"
    root = tmp_path_factory.mktemp("wheels")
    copies = [str(copy_source(folder, root / "src")) for folder in SOURCES]
    built = root / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--wheel-dir", str(built), *copies],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    names = sorted(path.name.split("-")[0] for path in built.glob("*.whl"))
    assert names == ["ecc_adapter_claude", "ecc_adapter_codex", "ecc_adapter_gemini",
                     "ecc_adapter_opencode", "ecc_celery", "ecc_control_plane",
                     "ecc_otel", "ecc_semantic"], names  # fmt: skip
    return built


def make_venv(wheels: Path, where: Path, requirement: str) -> Path:
    """A fresh venv (no pip in it, none of the shared tree) with ``requirement`` installed."""
    env = {**os.environ, "UV_CACHE_DIR": str(where.parent / "uv-cache"), "UV_NO_CONFIG": "1"}
    env.pop("VIRTUAL_ENV", None)
    subprocess.run([str(UV), "venv", "--quiet", "--python", sys.executable, str(where)],
                   check=True, env=env)  # fmt: skip
    subprocess.run(
        [str(UV), "pip", "install", "--quiet", "--offline", "--no-index", "--python",
         str(where / "bin" / "python"), "--find-links", str(wheels), "--find-links",
         str(WHEELHOUSE), requirement],
        check=True, env=env,
    )  # fmt: skip
    return where / "bin"


@pytest.fixture(scope="module")
def core_only(wheels: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_venv(wheels, tmp_path_factory.mktemp("core") / "venv", "ecc-control-plane")


@pytest.fixture(scope="module")
def everything(wheels: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_venv(wheels, tmp_path_factory.mktemp("all") / "venv", "ecc-control-plane[all]")


def run(bin_dir: Path, *argv: str, cwd: Path, stdin: str | None = None):
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return subprocess.run(
        [str(bin_dir / argv[0]), *argv[1:]], cwd=cwd, input=stdin, capture_output=True,
        text=True, env=env, timeout=60,
    )  # fmt: skip


@pytest.fixture
def repo(git_repo: Path) -> Path:
    return git_repo


def test_the_core_alone_is_small_and_names_each_missing_extra(core_only: Path, repo: Path) -> None:
    where = run(core_only, "python", "-c", "import ecc; print(ecc.__file__)", cwd=repo)
    assert where.stdout.startswith(str(core_only.parent)), where  # not the shared tree
    heavy = run(core_only, "python", "-c", "import textual", cwd=repo)
    assert heavy.returncode != 0  # the core does not pay for the fronts
    assert run(core_only, "ecc", "--version", cwd=repo).stdout == f"ecc {__version__}\n"
    for argv, extra in [
        (["ecc", "dashboard"], "tui"),
        (["ecc-memory-mcp"], "mcp"),
        (["ecc-sessions-mcp"], "mcp"),
        (["ecc", "remote", "serve"], "remote"),
        (["ecc", "web"], "web"),
        (["ecc", "-c", "executor=celery", "run", "--harness", "shell", "true"], "celery"),
    ]:
        result = run(core_only, *argv, cwd=repo)
        assert result.returncode == 1, (argv, result)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, (argv, result.stderr)
        assert f"needs the '{extra}' extra" in lines[0], (argv, lines)
        assert f"'ecc-control-plane[{extra}]'" in lines[0], (argv, lines)


MCP_CLIENT = textwrap.dedent(
    """
    import json, os, sys
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main():
        env = {**os.environ, "ECC_MEMORY_HARNESS": "claude"}
        params = StdioServerParameters(command=sys.argv[1], env=env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            print(json.dumps(sorted(tool.name for tool in (await client.list_tools()).tools)))

    anyio.run(main)
    """
)


def test_the_smoke_set_from_wheels(everything: Path, repo: Path) -> None:
    assert run(everything, "ecc", "--version", cwd=repo).stdout == f"ecc {__version__}\n"
    doctor = run(everything, "ecc", "doctor", cwd=repo)
    assert "Traceback" not in doctor.stderr and doctor.stdout, doctor

    plugins = json.loads(run(everything, "ecc", "plugins", "--json", cwd=repo).stdout)
    owners = {(row["group"], row["name"]): row["distribution"] for row in plugins}
    assert not [row for row in plugins if row["error"]], plugins
    for harness in ("claude", "codex", "gemini", "opencode"):
        assert owners[("ecc.adapters", harness)] == f"ecc-adapter-{harness}"
    assert owners[("ecc.adapters", "shell")] == "ecc-control-plane"
    assert owners[("ecc.executors", "celery")] == "ecc-celery"
    assert owners[("ecc.exporters", "otel")] == "ecc-otel"
    assert owners[("ecc.memory_rankers", "semantic")] == "ecc-semantic"

    title = ["--title", "Wheels install offline", "--kind", "decision", "--stdin"]
    saved = run(everything, "ecc", "memory", "save", *title, cwd=repo, stdin="From wheels.\n")
    assert saved.returncode == 0, saved
    found = run(everything, "ecc", "memory", "search", "wheels offline", "--json", cwd=repo)
    assert "Wheels install offline" in found.stdout, found
    # ecc-semantic's model comes inside a wheel too: semantic recall works offline
    meant = run(everything, "ecc", "memory", "search", "--semantic", "installing packages",
                "--json", cwd=repo)  # fmt: skip
    assert meant.returncode == 0, meant
    assert json.loads(meant.stdout)["ranker"] == "semantic", meant.stdout
    assert "Wheels install offline" in meant.stdout, meant.stdout

    session = run(everything, "ecc", "run", "--harness", "shell", "echo from-a-wheel", cwd=repo)
    assert session.returncode == 0 and "from-a-wheel" in session.stdout, session

    made = run(everything, "ecc", "plugins", "new", "adapter", "probe", cwd=repo.parent)
    assert made.returncode == 0, made  # the template is in the wheel
    assert (repo.parent / "ecc-adapter-probe" / "tests" / "test_adapter.py").is_file()

    client = run(everything, "python", "-c", MCP_CLIENT, str(everything / "ecc-memory-mcp"),
                 cwd=repo)  # fmt: skip
    assert client.returncode == 0, client
    assert json.loads(client.stdout) == ["memory_doctor", "memory_read", "memory_save",
                                         "memory_search"], client.stdout  # fmt: skip
