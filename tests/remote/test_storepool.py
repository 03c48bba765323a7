"""The remote app's store pool under thread churn: real threads, real SQLite files."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import SimpleNamespace

from ecc.remote.storepool import StorePool


def test_a_worker_threads_store_is_closed_when_the_thread_ends(tmp_path: Path) -> None:
    # the server's worker threads end after a while idle and new ones start under load: each
    # opens its own store, which must not outlive it (an open file per thread ever started)
    pool = StorePool(SimpleNamespace(store=SimpleNamespace(url=str(tmp_path / "ecc.db"))))
    pool.get()
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        threads = [threading.Thread(target=pool.get) for _ in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    # (SQLite may keep a few descriptors of closed connections for reuse: not one per thread)
    assert len(os.listdir("/proc/self/fd")) - before < 20
    assert len(pool.opened) == 1  # the main thread's, still in use
    pool.close()
    assert not pool.opened
