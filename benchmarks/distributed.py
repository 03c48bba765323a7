"""Sessions on a worker pool: latency, output throughput into PostgreSQL, and pool throughput.

Starts its own throwaway PostgreSQL and Redis on loopback and two ``ecc worker`` processes
(``w1``, ``w2``; concurrency 2 each, as two machines with their own data dirs), then prints:

* submit-to-first-line latency: from the client's create+submit to the first output line
  readable from PostgreSQL (target under 200 ms on loopback);
* output lines per second into PostgreSQL from one session (batched inserts);
* wall time for 100 short sessions on the two workers.

Everything it started is stopped before it exits.
Run: ``.venv/bin/python benchmarks/distributed.py`` (or ``make bench``).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

LATENCY_RUNS = 15
FLOOD_LINES = 200_000
SHORT_SESSIONS = 100


def main() -> int:
    import tomli_w

    from ecc.runtime.config import model as ecc_config
    from ecc.sessions import manager
    from ecc.store.models import TERMINAL
    from ecc.store.open import open_store
    from tests.distributed.conftest import Pool, kill_sessions, wait_ready
    from tests.servers import PostgresServer, RedisServer

    scratch = Path(tempfile.mkdtemp(prefix="ecc-bench-"))
    for key, sub in {
        "HOME": "home",
        "ECC_CONFIG_DIR": "client/config",
        "ECC_STATE_DIR": "client/state",
        "ECC_DATA_DIR": "client/data",
        "ECC_CACHE_DIR": "client/cache",
    }.items():
        (scratch / sub).mkdir(parents=True, exist_ok=True)
        os.environ[key] = str(scratch / sub)
    postgres = PostgresServer().start()
    redis = RedisServer().start()
    pool: Pool | None = None
    try:
        url = postgres.new_schema()
        broker_file = scratch / "broker-url"
        broker_file.write_text(redis.url)
        pool = Pool(url, redis.url, broker_file, scratch / "pool")
        pool.config = {
            "store": {"url": url},
            "executors": {"celery": {"broker_url_file": str(broker_file)}},
            "default_harness": "shell",
        }
        workers = [pool.worker("w1").start(), pool.worker("w2").start()]
        wait_ready(pool, workers)
        config_file = Path(os.environ["ECC_CONFIG_DIR"]) / "config.toml"
        config_file.write_text(tomli_w.dumps(pool.client_config()))
        ecc_config.reset()
        config = ecc_config.get_config()
        store = open_store(url)
        work = scratch / "work"
        work.mkdir()

        def submit(task: str) -> str:
            request = manager.Request(task=task, use_worktree=False, cwd=work)
            session = manager.create(store, request, config)
            manager.submit(store, session, config)
            return session.id

        def wait_all(ids: list[str], timeout: float = 600) -> None:
            deadline = time.monotonic() + timeout
            pending = set(ids)
            while pending and time.monotonic() < deadline:
                pending = {i for i in pending if store.get_session(i).state not in TERMINAL}  # type: ignore[union-attr]
                time.sleep(0.05)
            if pending:
                raise RuntimeError(f"{len(pending)} session(s) did not finish")

        submit("true")  # warm both the client and a worker process
        wait_all([submit("true") for _ in range(4)])

        latencies = []
        for _ in range(LATENCY_RUNS):
            started = time.perf_counter()
            sid = submit("echo first; sleep 0.2")
            while not store.read_output(sid, limit=1):
                time.sleep(0.002)
            latencies.append(time.perf_counter() - started)
            wait_all([sid])
        latencies.sort()
        p90 = latencies[int(len(latencies) * 0.9) - 1]
        print(
            f"submit-to-first-line latency: median {statistics.median(latencies) * 1000:.0f} ms, "
            f"p90 {p90 * 1000:.0f} ms, min {latencies[0] * 1000:.0f} ms "
            f"({LATENCY_RUNS} sessions; target < 200 ms)"
        )

        sid = submit(f"seq 1 {FLOOD_LINES}")
        while not store.read_output(sid, limit=1):
            time.sleep(0.002)
        first = time.perf_counter()
        wait_all([sid])
        elapsed = time.perf_counter() - first
        count = store.count_output(sid)
        assert count == FLOOD_LINES, count
        print(
            f"output into PostgreSQL: {count / elapsed:,.0f} lines/s "
            f"({count:,} lines from one session in {elapsed:.2f} s)"
        )

        started = time.perf_counter()
        ids = [submit(f"echo short {n}") for n in range(SHORT_SESSIONS)]
        submitted = time.perf_counter() - started
        wait_all(ids)
        total = time.perf_counter() - started
        done = [store.get_session(i) for i in ids]
        completed = sum(1 for s in done if s and s.state.value == "completed")
        hosts = sorted({s.runner_host for s in done if s})
        print(
            f"{SHORT_SESSIONS} short sessions on two workers (concurrency 2 each): {total:.1f} s "
            f"({SHORT_SESSIONS / total:.1f} sessions/s; submitting took {submitted:.1f} s); "
            f"{completed} completed; workers {', '.join(h.split('@')[0] for h in hosts)}"
        )
        store.close()
        return 0
    finally:
        if pool is not None:
            for worker in pool.workers:
                worker.stop()
            try:
                kill_sessions(pool.store_url)
            except Exception:
                pass
        redis.stop()
        postgres.stop()


if __name__ == "__main__":
    sys.exit(main())
