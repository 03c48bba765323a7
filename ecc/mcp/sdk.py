"""Load the SDK's low-level stdio server without running its packages' ``__init__`` modules.

``import mcp.server.lowlevel`` first runs ``mcp/__init__.py`` and ``mcp/server/__init__.py``,
which re-export the SDK's client, its high-level ``MCPServer`` and more: about a third of the
server's start-up for code a stdio tool server never runs. :func:`prepare` registers those two
packages as empty modules over the real directories, so only the submodules the server imports
load; the first access to a name the package itself defines (``mcp.ClientSession``) runs the
real ``__init__`` then, so every other user of the SDK in the process sees the whole package.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from types import ModuleType
from typing import Any

PACKAGES = ("mcp", "mcp.server")


class _DeferredPackage(ModuleType):
    """A package whose ``__init__`` runs on the first lookup of a name it has not got."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or self.__dict__.get("_ecc_initialised"):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        self.__dict__["_ecc_initialised"] = True
        spec = self.__spec__
        assert spec is not None and spec.loader is not None
        spec.loader.exec_module(self)
        return getattr(self, name)


def prepare() -> None:
    """Register the SDK's top packages as deferred ones, unless something imported them."""
    if any(name in sys.modules for name in PACKAGES):
        return
    top = importlib.util.find_spec("mcp")
    if top is None or not top.submodule_search_locations:
        return  # not installed: the import that follows says so
    root = next(iter(top.submodule_search_locations))
    for name in PACKAGES:
        directory = os.path.join(root, *name.split(".")[1:])
        location = os.path.join(directory, "__init__.py")
        spec = importlib.util.spec_from_file_location(
            name, location, submodule_search_locations=[directory]
        )
        if spec is None:
            return
        module = _DeferredPackage(name)
        module.__spec__ = spec
        module.__path__ = [directory]
        module.__file__ = location
        module.__package__ = name
        module.__loader__ = spec.loader
        sys.modules[name] = module
        if "." in name:
            parent, _, child = name.rpartition(".")
            setattr(sys.modules[parent], child, module)
