"""A third-party memory backend, installed as a distribution and picked by config (issue 3, item 4):
the service reaches storage only through the ``ecc_memory_backend`` hook."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_ecc
from tests.foundation.test_plugins import make_distribution

# Keeps every document of every scope as one flat file ``<scope>~<kind dir>~<name>`` under the
# directory named in its settings; its scan returns DocumentRef pairs.
FLAT_BACKEND = """
import os
from ecc.contract.hookspecs import hookimpl
from ecc.vault.backend import DocumentRef, ScanResult


class FlatStore:
    def __init__(self, root):
        self.root = root

    def location(self, scope):
        return os.path.join(self.root, scope)

    def init(self, scope):
        os.makedirs(self.root, exist_ok=True)
        return [self.location(scope)]

    def create(self, scope, kind_dir, name, text, exists_message):
        os.makedirs(self.root, exist_ok=True)
        path = os.path.join(self.root, f"{scope}~{kind_dir}~{name}")
        with open(path, "x", encoding="utf-8") as handle:
            handle.write(text)
        return f"{kind_dir}/{name}"

    def scan(self, scope, remaining_entries):
        result = ScanResult()
        names = sorted(os.listdir(self.root)) if os.path.isdir(self.root) else []
        for name in names:
            owner, _, rest = name.partition("~")
            if owner != scope:
                continue
            info = os.stat(os.path.join(self.root, name))
            stamp = f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}"
            result.documents.append(DocumentRef(rest.replace("~", "/"), stamp))
            result.visited += 1
        return result

    def read(self, scope, rel, max_bytes):
        path = os.path.join(self.root, f"{scope}~{rel.replace('/', '~')}")
        with open(path, encoding="utf-8") as handle:
            return handle.read(max_bytes)

    def close(self):
        pass


class FlatBackend:
    name = "flat"

    def __init__(self, settings):
        self.root = settings["root"]

    def open(self, cwd, env):
        return FlatStore(self.root)


@hookimpl
def ecc_memory_backend(name, settings):
    return FlatBackend(settings) if name == "flat" else None


class AsObject:  # the same hook as a method: a plugin object, which goes through pluggy
    @hookimpl
    def ecc_memory_backend(self, name, settings):
        return FlatBackend(settings) if name == "flat" else None


plugin = AsObject()
"""


@pytest.mark.parametrize("entry_point", ["ecc_test_flat", "ecc_test_flat:plugin"])
def test_config_selects_an_installed_backend(
    entry_point: str, tmp_path: Path, isolated_env: Path
) -> None:
    site, flat, repo = tmp_path / "site", tmp_path / "flat", tmp_path / "repo"
    site.mkdir()
    repo.mkdir()
    make_distribution(
        site,
        "ecc-test-flat",
        {"ecc_test_flat": FLAT_BACKEND},
        f"[ecc.memory_backends]\nflat = {entry_point}\n",
    )
    config = tmp_path / "ecc.toml"
    config.write_text(f'[memory]\nbackend = "flat"\n[memory.settings]\nroot = "{flat}"\n')
    env = {
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        "ECC_CONFIG": str(config),
        "ECC_MEMORY_PROJECT_ROOT": str(repo),
    }

    saved = run_ecc(
        "memory", "save", "--title", "Flat storage", "--stdin", "--json",
        cwd=repo, env=env, input="Backends are plugins: this one keeps flat files.\n",
    )  # fmt: skip
    assert saved.returncode == 0, saved.stderr
    memory_id = json.loads(saved.stdout)["memory"]["id"]
    assert [p.name for p in flat.iterdir()] == [f"project~notes~{memory_id}.md"]
    assert not (repo / ".ecc").exists()  # nothing went to the files backend's vault

    for args in (("search", "flat files"), ("search", "--json", "flat")):
        found = run_ecc("memory", *args, cwd=repo, env=env)
        assert found.returncode == 0 and memory_id in found.stdout, found.stderr
    # Warm, a plugin module and a plugin object alike are called directly, as pluggy recorded.
    traced = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ecc", "memory", "search", "flat"],
        cwd=repo, env={**os.environ, **env}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    imported = {line.rsplit("|", 1)[-1].strip() for line in traced.stderr.splitlines()}
    assert traced.returncode == 0 and memory_id in traced.stdout
    assert "pluggy" not in imported and "stevedore" not in imported
    read = run_ecc("memory", "read", memory_id, cwd=repo, env=env)
    assert read.returncode == 0 and "this one keeps flat files" in read.stdout
    doctor = run_ecc("memory", "doctor", "--json", cwd=repo, env=env)
    assert json.loads(doctor.stdout)["memoryCount"] == 1

    # A config naming a backend that no installed plugin provides: a clear error, no traceback.
    config.write_text('[memory]\nbackend = "nowhere"\n')
    for args in (("search", "flat"), ("doctor",)):
        failed = run_ecc("memory", *args, cwd=repo, env=env)
        assert failed.returncode != 0 and "Traceback" not in failed.stderr
        assert "No memory backend named 'nowhere' is installed" in failed.stderr


BROKEN_BACKENDS = {
    "invalid hook implementation": (
        "from ecc.contract.hookspecs import hookimpl\n\n"
        "@hookimpl\ndef ecc_memory_backend(name, cwd):\n    return None\n"
    ),
    "implements unknown hook": (
        "from ecc.contract.hookspecs import hookimpl\n\n"
        "@hookimpl\ndef ecc_memory_backend(name):\n    return None\n\n"
        "@hookimpl\ndef ecc_memory_backends(name):\n    return None\n"
    ),
    "failed to load": "import module_that_does_not_exist  # noqa\n",
}


@pytest.mark.parametrize("problem", sorted(BROKEN_BACKENDS))
def test_a_broken_backend_plugin_is_refused_with_a_warning(
    problem: str, tmp_path: Path, isolated_env: Path
) -> None:
    """As on a full plugin load: a warning naming the plugin, then the command's clear error."""
    site, repo = tmp_path / "site", tmp_path / "repo"
    site.mkdir()
    repo.mkdir()
    make_distribution(
        site,
        "ecc-test-broken-backend",
        {"ecc_test_broken": BROKEN_BACKENDS[problem]},
        "[ecc.memory_backends]\nbroken = ecc_test_broken\n",
    )
    config = tmp_path / "ecc.toml"
    config.write_text('[memory]\nbackend = "broken"\n')
    env = {
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        "ECC_CONFIG": str(config),
        "ECC_MEMORY_PROJECT_ROOT": str(repo),
    }
    for args in (("search", "anything"), ("doctor",)):
        result = run_ecc("memory", *args, cwd=repo, env=env)
        assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
        assert "Warning: plugin 'broken' (ecc.memory_backends:broken = ecc_test_broken)" in (
            result.stderr
        )
        assert problem in result.stderr
        assert "No memory backend named 'broken' is installed" in result.stderr
