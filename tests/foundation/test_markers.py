"""ecc's own hook markers and the direct call of a sole implementation, both against pluggy."""

from __future__ import annotations

import types

import pluggy
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecc.contract import hookspecs
from ecc.contract.markers import HookimplMarker, HookspecMarker, hookimpl
from ecc.runtime.plugins import loader as plugins


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


def module(source: str) -> types.ModuleType:
    result = types.ModuleType("ecc_test_backend")
    exec("from ecc.contract.hookspecs import hookimpl\n" + source, result.__dict__)
    return result


def through_pluggy(plugin: object, **kwargs: object) -> object:
    pm = pluggy.PluginManager("ecc")
    pm.add_hookspecs(hookspecs)
    pm.register(plugin)
    return pm.hook.ecc_memory_backend(**kwargs)


HANDLED = {
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
}


@pytest.mark.parametrize("case", sorted(HANDLED))
def test_sole_implementation_answers_as_pluggy(case):
    plugin = module(HANDLED[case])
    arguments = {"name": "files", "settings": {"root": "x"}}
    direct = plugins.call_sole_implementation(
        plugin, "ecc.memory_backends", "ecc_memory_backend", **arguments
    )
    assert direct is not plugins.NOT_HANDLED
    assert direct == through_pluggy(plugin, **arguments)


NOT_HANDLED = {
    "wrapper": "@hookimpl(wrapper=True)\ndef ecc_memory_backend(name):\n    return (yield)\n",
    "old-style wrapper": (
        "@hookimpl(hookwrapper=True)\ndef ecc_memory_backend(name):\n    yield\n"
    ),
    "two implementations": (
        "@hookimpl\ndef ecc_memory_backend(name):\n    return 1\n"
        "@hookimpl(specname='ecc_memory_backend')\ndef other(name):\n    return 2\n"
    ),
    "none": "@hookimpl\ndef ecc_register_commands(cli):\n    pass\n",
    "unknown hook": (
        "@hookimpl\ndef ecc_memory_backend(name):\n    return 1\n"
        "@hookimpl\ndef ecc_memory_backends(name):\n    return 2\n"
    ),
    "another group's hook": (
        "@hookimpl\ndef ecc_memory_backend(name):\n    return 1\n"
        "@hookimpl\ndef ecc_notify(notification, settings):\n    pass\n"
    ),
    "argument outside the spec": "@hookimpl\ndef ecc_memory_backend(name, cwd):\n    return 1\n",
    "keyword-only argument": "@hookimpl\ndef ecc_memory_backend(name, *, cwd):\n    return 1\n",
    "method": (
        "class B:\n    @hookimpl\n    def ecc_memory_backend(self, name):\n        return 1\n"
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
    "staticmethod": ("ecc_memory_backend = staticmethod(hookimpl(lambda name: 1))\n"),
}


@pytest.mark.parametrize("case", sorted(NOT_HANDLED))
def test_anything_but_the_plain_case_is_left_to_pluggy(case):
    plugin = module(NOT_HANDLED[case])
    result = plugins.call_sole_implementation(
        plugin, "ecc.memory_backends", "ecc_memory_backend", name="files", settings={}
    )
    assert result is plugins.NOT_HANDLED


def test_not_a_module_is_left_to_pluggy():
    class Plugin:
        @hookimpl
        def ecc_memory_backend(self, name):
            return name

    for plugin in (Plugin, Plugin()):
        assert (
            plugins.call_sole_implementation(
                plugin, "ecc.memory_backends", "ecc_memory_backend", name="x", settings={}
            )
            is plugins.NOT_HANDLED
        )


def test_a_non_firstresult_hook_is_left_to_pluggy():
    plugin = module("@hookimpl\ndef ecc_register_commands(cli):\n    return 1\n")
    for group in ("ecc.memory_backends", "ecc.adapters"):
        assert (
            plugins.call_sole_implementation(plugin, group, "ecc_register_commands", cli=None)
            is plugins.NOT_HANDLED
        )


def test_an_implementations_exception_reaches_the_caller_as_through_pluggy():
    plugin = module("@hookimpl\ndef ecc_memory_backend(name):\n    raise KeyError(name)\n")
    for call in (
        lambda: plugins.call_sole_implementation(
            plugin, "ecc.memory_backends", "ecc_memory_backend", name="files", settings={}
        ),
        lambda: through_pluggy(plugin, name="files", settings={}),
    ):
        with pytest.raises(KeyError, match="files"):
            call()


def test_the_built_in_backend_takes_the_direct_call():
    from ecc_plugins import files_backend

    direct = plugins.call_sole_implementation(
        files_backend, "ecc.memory_backends", "ecc_memory_backend", name="files", settings={}
    )
    assert type(direct) is files_backend.FilesBackend
    assert type(through_pluggy(files_backend, name="files", settings={})) is type(direct)
