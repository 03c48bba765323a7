"""Store access for the remote app: route handlers run in worker threads, one connection each."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ecc.contract.types import Config
    from ecc.store.base import Store


class StorePool:
    """A store connection per worker thread, opened on first use and closed at shutdown."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.local = threading.local()
        self.opened: list[Store] = []
        self.lock = threading.Lock()

    def get(self) -> Store:
        store = getattr(self.local, "store", None)
        if store is None:
            from ecc.store.open import open_store

            store = open_store(config=self.config)
            self.local.store = store
            with self.lock:
                self.opened.append(store)
        return store

    def close(self) -> None:
        with self.lock:
            for store in self.opened:
                try:
                    store.close()
                except Exception:  # closing from another thread may fail; the process ends
                    pass
            self.opened.clear()
