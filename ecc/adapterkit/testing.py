"""For an adapter's own tests: which of its hooks ecc really calls for a harness name.

ecc calls a harness hook (``ecc_build_command``, ``ecc_parse_hook_payload``…) only on the
plugins whose ``ecc_harnesses`` declares that harness, so an adapter's hooks never see another
harness. :func:`hooks_called_for` asks the installed plugin set, the same one ``ecc run`` and
``ecc hook`` use, so a test can check the declaration that routes the calls.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ecc.contract.types import ConfigLike


def hooks_called_for(plugin: object, harness: str, config: ConfigLike | None = None) -> list[str]:
    """The names of ``plugin``'s harness hooks that ecc calls for ``harness``, sorted (``plugin``
    as registered: an adapter's module). ``config`` defaults to the built-in defaults."""
    from ecc.runtime.plugins.loader import HARNESS_HOOKS, PluginSet

    if config is None:
        from ecc.runtime.config.model import Config
        from ecc.runtime.config.view import ConfigView

        config = ConfigView(Config().model_dump(mode="json"))
    routed = PluginSet(config).harness_hook(harness)
    return sorted(
        hook
        for hook in HARNESS_HOOKS
        if any(impl.plugin is plugin for impl in getattr(routed, hook).get_hookimpls())
    )
