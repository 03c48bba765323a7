"""Store access for the remote app: route handlers run in worker threads, one connection each.

Worker threads come and go (an idle one ends after a few seconds, and a burst of requests
starts new ones), so a thread's store is closed when the thread ends: it is held by the thread's
locals, which Python clears then. Those still open are closed at shutdown.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ecc.contract.types import Config
    from ecc.store.base import Store


class _ThreadStore:
    """One thread's store; closed when the thread's locals are cleared (the thread ended)."""

    def __init__(self, store: Store, pool: StorePool) -> None:
        self.store = store
        self.pool = pool

    def __del__(self) -> None:
        self.pool.release(self.store)


class StorePool:
    """A store connection per worker thread, opened on first use and closed with its thread."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.local = threading.local()
        self.opened: dict[int, Store] = {}
        self.lock = threading.RLock()  # release() may run in a finaliser on a thread holding it

    def get(self) -> Store:
        held = getattr(self.local, "held", None)
        if held is None:
            from ecc.store.open import open_store

            store = open_store(config=self.config)
            with self.lock:
                self.opened[id(store)] = store
            held = self.local.held = _ThreadStore(store, self)
        return held.store

    def release(self, store: Store) -> None:
        """Close ``store`` unless closed already (at shutdown)."""
        with self.lock:
            if self.opened.pop(id(store), None) is None:
                return
        _close_quietly(store)

    def close(self) -> None:
        with self.lock:
            stores = list(self.opened.values())
            self.opened.clear()
        for store in stores:
            _close_quietly(store)


def _close_quietly(store: Store) -> None:
    try:
        store.close()
    except Exception:  # closing from another thread may fail; the process ends
        pass
