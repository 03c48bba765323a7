"""Remote API throughput and latency on loopback, against a real ``ecc remote serve``.

Usage: python benchmarks/remote.py [--runs N] [--creates N] [--requests N]

Starts the server in a subprocess (own temporary config/state dirs, one token), then measures:

* **create latency**: ``POST /v1/sessions`` (validation, store insert, spawn of the detached
  runner) with 1 and 4 concurrent clients; median and 95th percentile per request. The harness
  is ``/bin/true`` (a ``[harness_runners]`` entry), so each session ends at once.
* **list throughput**: ``GET /v1/sessions`` requests per second with 1, 4 and 16 concurrent
  clients (separate processes, one kept-alive connection each): the active list (empty: every
  session has finished) and ``?all=true&limit=100`` (100 sessions, about 55 KB of JSON).

Each figure is the median of ``--runs`` runs. The server is one uvicorn process (one event loop,
store reads in its worker threads).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path


def _env(base: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECC_")}
    env.update(
        HOME=str(base / "home"),
        ECC_CONFIG_DIR=str(base / "config"),
        ECC_STATE_DIR=str(base / "state"),
        ECC_DATA_DIR=str(base / "data"),
        ECC_CACHE_DIR=str(base / "cache"),
    )
    (base / "home").mkdir(parents=True, exist_ok=True)
    return env


def start_server(base: Path) -> tuple[subprocess.Popen[str], int, str, Path]:
    env = _env(base)
    root = base / "projects"
    root.mkdir()
    config = base / "config"
    config.mkdir()
    (config / "config.toml").write_text(
        "[remote]\n"
        f'allowed_roots = ["{root}"]\n'
        "rate_limit_per_minute = 100000000\n"
        '[harness_runners.quick]\nprogram = "/bin/true"\n'
    )
    token = "bench-" + os.urandom(24).hex()
    token_file = base / "token"
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, token.encode() + b"\n")
    os.close(fd)
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "ecc", "remote", "serve", "--port", "0"),
            *("--log-level", "warning", "--token-file", str(token_file)),
            *("--max-connections", "256"),
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    port: list[int] = []
    ready = threading.Event()

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "listening on" in line:
                port.append(int(line.rsplit(":", 1)[1]))
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    if not ready.wait(60) or not port:
        proc.kill()
        raise SystemExit("the server did not start")
    return proc, port[0], token, root


def _request(conn: http.client.HTTPConnection, method: str, path: str, token: str, body=None):
    headers = {"Authorization": f"Bearer {token}"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    payload = response.read()
    return response.status, payload


def _create_worker(args: tuple[int, str, str, int]) -> list[float]:
    port, token, root, count = args
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    body = {"task": "bench", "repository": root, "harness": "quick", "worktree": False}
    latencies = []
    for _ in range(count):
        start = time.perf_counter()
        status, payload = _request(conn, "POST", "/v1/sessions", token, body)
        latencies.append((time.perf_counter() - start) * 1000)
        if status != 201:
            raise SystemExit(f"create failed: {status} {payload[:200]!r}")
    conn.close()
    return latencies


def _list_worker(args: tuple[int, str, str, int]) -> int:
    port, token, path, count = args
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for _ in range(count):
        status, payload = _request(conn, "GET", path, token)
        if status != 200:
            raise SystemExit(f"list failed: {status} {payload[:200]!r}")
    conn.close()
    return count


def measure_create(port: int, token: str, root: Path, clients: int, per_client: int) -> list[float]:
    with ThreadPoolExecutor(clients) as pool:
        results = pool.map(_create_worker, [(port, token, str(root), per_client)] * clients)
        return [value for chunk in results for value in chunk]


def measure_list(
    pool: ProcessPoolExecutor, port: int, token: str, path: str, clients: int, total: int
) -> float:
    per_client = max(1, total // clients)
    start = time.perf_counter()
    done = sum(pool.map(_list_worker, [(port, token, path, per_client)] * clients))
    return done / (time.perf_counter() - start)


def wait_finished(port: int, token: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        _, payload = _request(conn, "GET", "/v1/sessions", token)
        if not json.loads(payload)["sessions"]:
            break
        time.sleep(0.2)
    _, payload = _request(conn, "GET", "/v1/sessions?all=true&limit=1000", token)
    conn.close()
    return len(json.loads(payload)["sessions"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--creates", type=int, default=20, help="creates per run and concurrency")
    parser.add_argument("--requests", type=int, default=500, help="list requests per run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ecc-bench-remote-") as tmp:
        proc, port, token, root = start_server(Path(tmp))
        try:
            print(f"server: 127.0.0.1:{port}, {os.cpu_count()} CPU(s), runs: {args.runs}")
            for clients in (1, 4):
                medians, p95s = [], []
                for _ in range(args.runs):
                    latencies = sorted(
                        measure_create(port, token, root, clients, args.creates // clients)
                    )
                    medians.append(statistics.median(latencies))
                    p95s.append(latencies[int(len(latencies) * 0.95) - 1])
                print(
                    f"create, {clients:>2} client(s), {args.creates} per run: "
                    f"median {statistics.median(medians):6.1f} ms, "
                    f"p95 {statistics.median(p95s):6.1f} ms"
                )
            stored = wait_finished(port, token)
            # top up to at least 100 stored sessions for the list measurement
            while stored < 100:
                measure_create(port, token, root, 4, 5)
                stored = wait_finished(port, token)
            size = len(_list_payload(port, token, "/v1/sessions?all=true&limit=100"))
            print(f"store: {stored} finished sessions; ?all=true&limit=100 body is {size} bytes")
            with ProcessPoolExecutor(16) as pool:
                for label, path in (
                    ("active (empty list)", "/v1/sessions"),
                    ("all, limit=100", "/v1/sessions?all=true&limit=100"),
                ):
                    for clients in (1, 4, 16):
                        rates = [
                            measure_list(pool, port, token, path, clients, args.requests)
                            for _ in range(args.runs)
                        ]
                        print(
                            f"list {label:<20} {clients:>2} client(s): "
                            f"{statistics.median(rates):7.0f} requests/s "
                            f"({args.requests} requests per run)"
                        )
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _list_payload(port: int, token: str, path: str) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    _, payload = _request(conn, "GET", path, token)
    conn.close()
    return payload


if __name__ == "__main__":
    main()
