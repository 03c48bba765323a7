"""ecc's own hook markers, and the call of a sole implementation, both against pluggy."""

from __future__ import annotations

import importlib
import json
import sys
import types
from pathlib import Path

import pluggy
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecc.contract import hookspecs
from ecc.contract.markers import HookimplMarker, HookspecMarker, hookimpl
from ecc.runtime.plugins import discovery, index
from ecc.runtime.plugins.sole import call_sole


def _function():
    def ecc_memory_backend(name, settings):
        return name

    return ecc_memory_backend


@given(
    flags=st.fixed_dictionaries(
        {}, optional={k: st.booleans() for k in ("tryfirst", "trylast", "optionalhook")}
    ),
    wrapper=st.sampled_from([{}, {"wrapper": True}, {"hookwrapper": True}]),
    specname=st.sampled_from([{}, {"specname": None}, {"specname": "ecc_notify"}]),
    called=st.booleans(),
)
def test_impl_marker_sets_what_pluggys_sets(flags, wrapper, specname, called):
    opts = {**flags, **wrapper, **specname}
    ours, theirs = _function(), _function()
    if called:  # @hookimpl(…)
        HookimplMarker()(**opts)(ours)
        pluggy.HookimplMarker("ecc")(**opts)(theirs)
    else:  # @hookimpl with a function, options as keywords
        HookimplMarker()(ours, **opts)
        pluggy.HookimplMarker("ecc")(theirs, **opts)
    assert ours.ecc_impl == theirs.ecc_impl


@pytest.mark.parametrize(
    "opts",
    [{}, {"firstresult": True}, {"historic": True}, {"warn_on_impl": DeprecationWarning("x")}],
)
def test_spec_marker_sets_what_pluggys_sets(opts):
    ours, theirs = _function(), _function()
    HookspecMarker()(**opts)(ours)
    pluggy.HookspecMarker("ecc")(**opts)(theirs)
    assert ours.ecc_spec == theirs.ecc_spec


def test_a_historic_firstresult_spec_is_refused_as_by_pluggy():
    for marker in (HookspecMarker(), pluggy.HookspecMarker("ecc")):
        with pytest.raises(ValueError, match="historic firstresult"):
            marker(firstresult=True, historic=True)(_function())


def test_pluggy_orders_our_marked_implementations_as_its_own():
    calls = []

    def plugin(tag, **opts):
        @hookimpl(**opts)
        def ecc_notify(notification, settings):
            calls.append(tag)

        return types.SimpleNamespace(ecc_notify=ecc_notify)

    pm = pluggy.PluginManager("ecc")
    pm.add_hookspecs(hookspecs)
    for tag, opts in [("a", {"tryfirst": True}), ("b", {}), ("c", {"trylast": True}), ("d", {})]:
        pm.register(plugin(tag, **opts), name=tag)
    pm.hook.ecc_notify(notification=None, settings={})
    assert calls == ["a", "d", "b", "c"]  # tryfirst, then last registered first, trylast last


GROUP = "ecc.memory_backends"
SHAPES = {
    # plain: pluggy calls the one function; the warm path calls it directly
    "plain": "@hookimpl\ndef ecc_memory_backend(name, settings):\n    return (name, settings)\n",
    "fewer arguments": "@hookimpl\ndef ecc_memory_backend(settings):\n    return settings\n",
    "not mine": "@hookimpl\ndef ecc_memory_backend(name):\n    return None\n",
    "specname": (
        "@hookimpl(specname='ecc_memory_backend')\ndef backend(name):\n    return [name]\n"
    ),
    "defaults are not passed": (
        "@hookimpl\ndef ecc_memory_backend(name, extra=7):\n    return (name, extra)\n"
    ),
    "order options alone": (
        "@hookimpl(tryfirst=True)\ndef ecc_memory_backend(name):\n    return name * 2\n"
    ),
    "other hooks of the group": (
        "@hookimpl\ndef ecc_memory_backend(name):\n    return name\n"
        "@hookimpl\ndef ecc_register_commands(cli):\n    pass\n"
        "def helper(name):\n    return 1\n"
    ),
    "keyword-only argument": (
        "@hookimpl\ndef ecc_memory_backend(name, *, cwd=None):\n    return (name, cwd)\n"
    ),
    "method": (
        "class B:\n    @hookimpl\n    def ecc_memory_backend(self, name):\n        return name\n"
        "ecc_memory_backend = B().ecc_memory_backend\n"
    ),
    "decorated": (
        "import functools\n"
        "def logged(function):\n"
        "    @functools.wraps(function)\n"
        "    def wrapper(*args):\n"
        "        return function(*args)\n"
        "    return wrapper\n"
        "@hookimpl\n@logged\ndef ecc_memory_backend(name):\n    return name\n"
    ),
    # never recorded: pluggy's answer is more than one function's return value
    "wrapper": ("@hookimpl(wrapper=True)\ndef ecc_memory_backend(name):\n    return (yield)\n"),
    "old-style wrapper": (
        "@hookimpl(hookwrapper=True)\ndef ecc_memory_backend(name):\n    yield\n"
    ),
    "two implementations": (
        "@hookimpl\ndef ecc_memory_backend(name):\n    return None\n"
        "@hookimpl(specname='ecc_memory_backend')\ndef other(name):\n    return 2\n"
    ),
    "none": "@hookimpl\ndef ecc_register_commands(cli):\n    pass\n",
}
RECORDED = {
    "plain", "fewer arguments", "not mine", "specname", "defaults are not passed",
    "order options alone", "other hooks of the group", "keyword-only argument", "method",
    "decorated",
}  # fmt: skip
REFUSED = {  # pluggy refuses these plugins: the usual warning, no answer, nothing recorded
    "unknown hook": (
        "@hookimpl\ndef ecc_memory_backend(name):\n    return 1\n"
        "@hookimpl\ndef ecc_memory_backends(name):\n    return 2\n"
    ),
    "another group's hook": (
        "@hookimpl\ndef ecc_memory_backend(name):\n    return 1\n"
        "@hookimpl\ndef ecc_notify(notification, settings):\n    pass\n"
    ),
    "argument outside the spec": "@hookimpl\ndef ecc_memory_backend(name, cwd):\n    return 1\n",
}


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Install ``source`` as the memory backend plugin ``sole`` (a module on sys.path)."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(
        discovery, "discover", lambda key=None: {GROUP: [("sole", "ecc_test_sole")]}
    )
    monkeypatch.delitem(sys.modules, "ecc_test_sole", raising=False)

    def install(source: str) -> types.ModuleType:
        sys.modules.pop("ecc_test_sole", None)
        (site / "ecc_test_sole.py").write_text(
            "from ecc.contract.hookspecs import hookimpl\n" + source
        )
        importlib.invalidate_caches()
        return importlib.import_module("ecc_test_sole")

    yield install
    sys.modules.pop("ecc_test_sole", None)


def through_pluggy(plugin: object, **kwargs: object) -> object:
    pm = pluggy.PluginManager("ecc")
    pm.add_hookspecs(hookspecs)
    pm.register(plugin)
    return pm.hook.ecc_memory_backend(**kwargs)


def sole(**kwargs: object) -> object:
    return call_sole(GROUP, "sole", "ecc_memory_backend", **kwargs)


def is_recorded() -> bool:
    value = dict(discovery.discover()[GROUP])["sole"]
    installed = discovery.discovery_key()
    return index.read_sole(GROUP, "sole", value, "ecc_memory_backend", installed) is not None


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_a_sole_implementation_answers_as_pluggy_cold_and_warm(case, installed):
    plugin = installed(SHAPES[case])
    arguments = {"name": "files", "settings": {"root": "x"}}
    expected = through_pluggy(plugin, **arguments)
    assert sole(**arguments) == expected  # cold: through a plugin set of that entry point
    assert is_recorded() is (case in RECORDED)
    assert sole(**arguments) == expected  # warm: the recorded function, or pluggy again


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_plugin_pluggy_refuses_is_refused_with_a_warning_and_never_recorded(
    case, installed, capsys
):
    installed(REFUSED[case])
    for _ in range(2):
        assert sole(name="files", settings={}) is None
        assert not is_recorded()
    assert "Warning: plugin 'sole'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "damage",
    [{"attribute": None}, {"argnames": None}, {"argnames": [1]}, {"stamp": "x"}],
    ids=["attribute", "argnames", "argument", "stamp"],
)
def test_a_damaged_record_is_ignored_and_pluggy_asked_again(installed, damage):
    from ecc.runtime import startcache

    installed("@hookimpl\ndef ecc_memory_backend(name):\n    return name\n")
    assert sole(name="x", settings={}) == "x" and is_recorded()
    [entry] = list(Path(startcache.location("sole", "k")).parent.glob("*.json"))
    entry.write_text(json.dumps({**json.loads(entry.read_text()), **damage}))
    assert not is_recorded()
    assert sole(name="y", settings={}) == "y"  # answered through pluggy, and recorded again
    assert is_recorded()


def test_a_changed_plugin_module_is_read_again(installed):
    installed("@hookimpl\ndef ecc_memory_backend(name):\n    return 'first'\n")
    assert sole(name="x", settings={}) == "first"
    assert sole(name="x", settings={}) == "first" and is_recorded()
    installed("@hookimpl\ndef ecc_memory_backend(name, settings):\n    return 'second!'\n")
    assert not is_recorded()  # the module's file changed: the record no longer applies
    assert sole(name="x", settings={}) == "second!"


def test_an_implementations_exception_reaches_the_caller_as_through_pluggy(installed):
    plugin = installed("@hookimpl\ndef ecc_memory_backend(name):\n    raise KeyError(name)\n")
    with pytest.raises(KeyError, match="files"):
        through_pluggy(plugin, name="files", settings={})
    for _ in range(2):  # cold, then warm
        with pytest.raises(KeyError, match="files"):
            sole(name="files", settings={})


def test_a_plugin_not_installed_or_not_allowed_answers_none(installed, monkeypatch):
    installed("@hookimpl\ndef ecc_memory_backend(name):\n    return name\n")
    assert call_sole(GROUP, "other", "ecc_memory_backend", name="x", settings={}) is None
    monkeypatch.setenv("ECC_PLUGINS", "files")
    assert sole(name="x", settings={}) is None


def test_the_built_in_backend_is_recorded_and_called_directly(monkeypatch):
    from ecc_plugins import files_backend

    monkeypatch.setattr(
        discovery, "discover", lambda key=None: {GROUP: [("files", "ecc_plugins.files_backend")]}
    )
    for _ in range(2):
        backend = call_sole(GROUP, "files", "ecc_memory_backend", name="files", settings={})
        assert type(backend) is files_backend.FilesBackend
    value = "ecc_plugins.files_backend"
    recorded = index.read_sole(
        GROUP, "files", value, "ecc_memory_backend", discovery.discovery_key()
    )
    assert recorded["attribute"] == ("ecc_memory_backend")
