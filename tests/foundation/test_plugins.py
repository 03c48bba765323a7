"""Plugin discovery: installed plugins are listed, broken ones warn instead of crashing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import HarnessInfo, LaunchContext
from ecc.runtime.plugins import loader as plugins
from tests.conftest import REPO, run_ecc

FIRST_PARTY_ADAPTERS = {"claude", "codex", "opencode", "gemini"}


def plugin_rows(result: subprocess.CompletedProcess[str]) -> dict[str, dict]:
    assert result.returncode == 0, result.stderr
    return {row["name"]: row for row in json.loads(result.stdout)}


def test_lists_first_party_adapters_and_builtins():
    rows = plugin_rows(run_ecc("plugins", "--json"))
    for name in FIRST_PARTY_ADAPTERS:
        assert rows[name]["group"] == "ecc.adapters"
        assert rows[name]["distribution"] == f"ecc-adapter-{name}"
        assert rows[name]["loaded"] is True and rows[name]["error"] is None
        assert "ecc_build_command" in rows[name]["hooks"]
    assert rows["shell"]["distribution"] == "ecc-control-plane"
    assert rows["log"]["group"] == "ecc.notifiers"


def test_empty_ecc_plugins_loads_none():
    result = run_ecc("plugins", "--json", env={"ECC_PLUGINS": ""})
    assert json.loads(result.stdout) == []
    only = plugin_rows(run_ecc("plugins", "--json", env={"ECC_PLUGINS": "shell,codex"}))
    assert set(only) == {"shell", "codex"}


def test_notifiers_not_selected_in_config_are_listed_disabled(tmp_path: Path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[notifications]\nnotifiers = []\n")
    rows = plugin_rows(run_ecc("plugins", "--json", env={"ECC_CONFIG": str(cfg)}))
    assert rows["log"]["enabled"] is False and rows["log"]["loaded"] is False
    assert rows["log"]["hooks"] == ["ecc_notify"]


def make_distribution(site: Path, name: str, modules: dict[str, str], entry_points: str) -> None:
    """Lay out a distribution the way pip installs one: modules plus a .dist-info folder."""
    for module, source in modules.items():
        (site / f"{module}.py").write_text(source)
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)


BROKEN_MODULES = {
    "ecc_test_badimport": "import module_that_does_not_exist  # noqa\n",
    "ecc_test_badsig": (
        "from ecc.contract.hookspecs import hookimpl\n\n"
        "@hookimpl\ndef ecc_build_command(harness, launch, surprise):\n    return None\n"
    ),
    "ecc_test_typo": (
        "from ecc.contract.hookspecs import hookimpl\n\n"
        "@hookimpl\ndef ecc_buidl_command(harness, launch):\n    return None\n"
    ),
}
BROKEN_ENTRY_POINTS = (
    "[ecc.adapters]\n"
    "badimport = ecc_test_badimport\n"
    "badsig = ecc_test_badsig\n"
    "typo = ecc_test_typo\n"
)


def test_broken_plugins_warn_and_ecc_keeps_working(tmp_path: Path):
    site = tmp_path / "site"
    site.mkdir()
    make_distribution(site, "ecc-test-broken", BROKEN_MODULES, BROKEN_ENTRY_POINTS)
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    result = run_ecc("plugins", "--json", env=env)
    rows = plugin_rows(result)
    assert "ModuleNotFoundError" in rows["badimport"]["error"]
    assert "surprise" in rows["badsig"]["error"]
    assert "ecc_buidl_command" in rows["typo"]["error"]
    for name in ("badimport", "badsig", "typo"):
        assert rows[name]["loaded"] is False
        assert rows[name]["distribution"] == "ecc-test-broken"
    assert "Warning: plugin 'badimport' (ecc.adapters:badimport = ecc_test_badimport)" in (
        result.stderr
    )
    assert "Warning: plugin 'badsig' (ecc.adapters:badsig = ecc_test_badsig)" in result.stderr
    assert "Warning: plugin 'typo'" in result.stderr
    assert rows["claude"]["loaded"] is True  # the healthy ones still work
    doctor = run_ecc("doctor", env=env)
    assert doctor.returncode == 1
    assert "FAIL plugins" in doctor.stdout and "badsig" in doctor.stdout


class AcmeAdapter:
    """A plugin class registered directly, the way plugin tests in llm and datasette do it."""

    @hookimpl
    def ecc_harnesses(self):
        return HarnessInfo(name="acme", program="acme", aliases=("acme-cli",))

    @hookimpl
    def ecc_build_command(self, harness: str, launch: LaunchContext):
        return ["acme", "--", launch.task]  # asked only about "acme", the harness it declares


@pytest.fixture
def acme_plugin():
    plugin_set = plugins.PluginSet(None)
    plugin_set.pm.register(AcmeAdapter(), name="test:acme")
    plugins.use(plugin_set)
    yield plugin_set
    plugins.reset()


def test_registered_plugin_class_answers_hooks(acme_plugin, tmp_path: Path):
    from ecc.runtime.config.model import Config
    from ecc.sessions import harnesses

    assert harnesses.canonical_name("ACME-cli") == "acme"
    launch = LaunchContext("s1", "-rf task", tmp_path, tmp_path, Config())
    argv = acme_plugin.harness_hook("acme").ecc_build_command(harness="acme", launch=launch)
    assert argv == ["acme", "--", "-rf task"]
    shell = acme_plugin.harness_hook("shell").ecc_build_command(harness="shell", launch=launch)
    assert shell == ["/bin/sh", "-c", "-rf task"]  # acme is not asked about another harness
    # an alias is resolved before a harness hook is called: by itself it owns nothing
    alias = acme_plugin.harness_hook("acme-cli").ecc_build_command(
        harness="acme-cli", launch=launch
    )
    assert alias is None
    assert acme_plugin.harness_owners()["acme"] == ["test:acme"]


def test_unknown_harness_lists_the_known_ones():
    from ecc.contract.errors import EccError
    from ecc.sessions import harnesses

    with pytest.raises(EccError, match=r"unknown harness 'nope' \(known: .*claude.*shell"):
        harnesses.canonical_name("nope")


@pytest.mark.slow
def test_third_party_cursor_adapter_installs_with_pip(tmp_path: Path):
    target = tmp_path / "site"
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            str(REPO / "examples" / "ecc-adapter-cursor"),
        ],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr
    env = {"PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")])}
    before = plugin_rows(run_ecc("plugins", "--json"))
    assert "cursor" not in before
    rows = plugin_rows(run_ecc("plugins", "--json", env=env))
    assert rows["cursor"]["distribution"] == "ecc-adapter-cursor"
    assert rows["cursor"]["loaded"] is True
    probe = (
        "from ecc.sessions import harnesses;"
        "info = harnesses.resolve('cursor'); print(info.name, info.program)"
    )
    resolved = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env={**os.environ, **env}
    )
    assert resolved.stdout.strip() == "cursor cursor-agent", resolved.stderr


# -- lazy groups --------------------------------------------------------------------------------


def impls(plugin_set: plugins.PluginSet, hook_name: str) -> list[tuple[str, object]]:
    """What a hook call runs, in the order pluggy runs it."""
    caller = getattr(plugin_set.hook, hook_name)
    return [(impl.plugin_name, impl.function) for impl in caller.get_hookimpls()]


CROSS_GROUP_MODULES = {  # one hook (ecc_register_commands) implemented in three groups
    f"ecc_test_cross_{group}": (
        "from ecc.contract.hookspecs import hookimpl\n\n"
        f"@hookimpl\ndef ecc_register_commands(cli):\n    return {group!r}\n"
        + (f"\n@hookimpl\ndef {extra}(**kwargs):\n    return None\n" if extra else "")
    )
    for group, extra in (
        ("adapters", "ecc_build_command"),
        ("scorers", "ecc_score_tool_call"),
        ("executors", "ecc_executor"),
    )
}
CROSS_GROUP_ENTRY_POINTS = (
    "[ecc.adapters]\nzz-cross = ecc_test_cross_adapters\n"
    "[ecc.risk_scorers]\ncross = ecc_test_cross_scorers\n"
    "[ecc.executors]\naa-cross = ecc_test_cross_executors\n"
)


@pytest.mark.parametrize(
    "first",
    [
        (),
        ("ecc_executor", "ecc_harnesses"),  # a later group first, then an earlier one
        ("ecc_executor", "ecc_score_tool_call", "ecc_notify"),
        ("ecc_memory_backend", "ecc_build_command"),
    ],
)
def test_every_hook_answers_the_same_through_lazy_groups(
    first: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from ecc.runtime.config import view as fastconfig
    from ecc.sessions import harnesses

    site = tmp_path / "site"
    site.mkdir()
    make_distribution(site, "ecc-test-cross", CROSS_GROUP_MODULES, CROSS_GROUP_ENTRY_POINTS)
    # installed like a site directory (discovery ignores sys.path[0], the script's directory)
    monkeypatch.setattr(sys, "path", [sys.path[0], str(site), *sys.path[1:]])
    from stevedore import ExtensionManager  # stevedore keeps each group's list per process

    monkeypatch.setattr(ExtensionManager, "ENTRY_POINT_CACHE", {})
    config = fastconfig.view()
    eager = plugins.PluginSet(config)
    lazy = plugins.PluginSet(config, lazy=True)
    for hook_name in first:  # load some groups out of discovery order first
        impls(lazy, hook_name)
    for hook_name in sorted(plugins.HOOK_GROUPS):
        assert impls(lazy, hook_name) == impls(eager, hook_name), hook_name
    assert [r.as_dict() for r in lazy.records] == [r.as_dict() for r in eager.records]
    import click

    answers = lazy.hook.ecc_register_commands(cli=click.Group("lazy"))
    assert answers == eager.hook.ecc_register_commands(cli=click.Group("eager"))
    assert answers == ["scorers", "executors", "adapters"]  # last registered first, as eager
    # and a real call: the same harness table either way
    plugins.use(lazy)
    through_lazy = harnesses.available(config)
    plugins.use(eager)
    assert harnesses.available(config) == through_lazy
    assert {"claude", "shell"} <= set(through_lazy)


def test_hooks_called_from_many_threads_at_once_see_whole_groups():
    import threading
    import time

    from ecc.runtime.config import view as fastconfig

    config = fastconfig.view()
    eager = plugins.PluginSet(config)
    names = sorted(plugins.HOOK_GROUPS) * 3
    for _ in range(3):
        lazy = plugins.PluginSet(config, lazy=True)
        register = lazy._register

        def slow_register(plugin: object, record: plugins.PluginRecord, register=register) -> bool:
            time.sleep(0.01)  # a slow import: others must wait for the whole group
            return register(plugin, record)

        lazy._register = slow_register  # type: ignore[method-assign]
        seen: dict[int, list[tuple[str, object]]] = {}
        start = threading.Barrier(len(names))

        def call(
            index: int,
            hook_name: str,
            lazy: plugins.PluginSet = lazy,
            seen: dict[int, list[tuple[str, object]]] = seen,
            start: threading.Barrier = start,
        ) -> None:
            start.wait()
            time.sleep(0.002 * index)  # arrive while the first group is half registered
            seen[index] = impls(lazy, hook_name)

        threads = [
            threading.Thread(target=call, args=(index, name)) for index, name in enumerate(names)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for index, name in enumerate(names):
            assert seen[index] == impls(eager, name), name


def test_every_hook_has_a_family():
    import pluggy

    from ecc.contract import hookspecs

    pm = pluggy.PluginManager("ecc")
    pm.add_hookspecs(hookspecs)
    specs = {name for name in dir(pm.hook) if name.startswith("ecc_")}
    assert specs == set(plugins.HOOK_GROUPS)
    for groups in plugins.HOOK_GROUPS.values():
        assert set(groups) <= set(plugins.GROUPS)


def test_run_detached_loads_only_adapters_and_executors(git_repo: Path):
    probe = (
        "import sys, json\n"
        "from ecc.cli.app import main\n"
        "try:\n"
        "    main(['run', '-d', '--no-worktree', '--harness', 'shell', 'true'])\n"
        "finally:\n"
        "    from ecc.runtime.plugins.loader import get_plugins\n"
        "    groups = sorted({r.group for r in get_plugins()._records})\n"
        "    mods = [m for m in ('ecc_plugins.heuristic', 'ecc_plugins.log_notifier',\n"
        "                        'ecc_plugins.files_backend', 'pydantic') if m in sys.modules]\n"
        "    print(json.dumps([groups, mods]), file=sys.stderr)\n"
    )
    for _ in range(2):  # the first run fills the config and plugin caches (pydantic, stevedore)
        result = subprocess.run(
            [sys.executable, "-c", probe], cwd=git_repo, capture_output=True, text=True
        )
    assert len(result.stdout.strip()) == 12, result.stderr  # the bare id: stdout is a pipe
    groups, modules = json.loads(result.stderr.strip().splitlines()[-1])
    assert groups == ["ecc.adapters", "ecc.executors"]
    assert modules == []


def test_a_hook_outside_its_group_family_is_refused(tmp_path: Path):
    site = tmp_path / "site"
    site.mkdir()
    source = (
        "from ecc.contract.hookspecs import hookimpl\n\n"
        "@hookimpl\ndef ecc_notify(notification, settings):\n    pass\n\n"
        "@hookimpl\ndef ecc_session_env(harness, launch):\n    return {'X': '1'}\n"
    )
    make_distribution(
        site,
        "ecc-test-offfamily",
        {"ecc_test_offfamily": source},
        "[ecc.notifiers]\noffamily = ecc_test_offfamily\n",
    )
    env = {
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        "ECC__NOTIFICATIONS__NOTIFIERS": '["log", "offamily"]',
    }
    result = run_ecc("plugins", "--json", env=env)
    rows = plugin_rows(result)
    assert rows["offamily"]["loaded"] is False
    assert "outside the ecc.notifiers family: ecc_session_env" in rows["offamily"]["error"]
    assert "Warning: plugin 'offamily'" in result.stderr
    assert rows["log"]["loaded"] is True
