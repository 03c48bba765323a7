"""Memory vault timings: whole-process `ecc memory search` (cold and warm index) and `doctor`.

Builds vaults of N memories (default 1,000 / 5,000 / 50,000; `--sizes 200,1000` to run small,
`--sizes 200000` for the largest) in a temporary git repository with an isolated HOME and cache,
then prints medians of `--runs` runs. Warm figures are taken twice: without a watcher (every
search walks the vault: listdir + one lstat a file) and with `ecc daemon` running, whose tree
watcher lets a search of an unchanged vault skip the walk. Targets (2-core machine): warm search
and doctor at 50,000 under 150 ms with the watcher; at 200,000 search and doctor complete.
Beside them: `python -c pass` and the walk floor (a whole-process plain-Python walk of the
vault, listdir + one lstat a name: what any scan that stats every file costs at least), and
`same`: whether the warm searches, watched and not, print exactly what the cold one (a full
scan from nothing) printed.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ecc.vault.format import MEMORY_KINDS, serialize_memory_document  # noqa: E402

WORDS = [
    "auth",
    "migration",
    "rollout",
    "database",
    "cache",
    "index",
    "worker",
    "queue",
    "deploy",
    "token",
    "schema",
    "retry",
    "latency",
    "budget",
    "review",
    "harness",
    "session",
    "branch",
    "merge",
    "conflict",
    "release",
    "test",
    "flaky",
    "lint",
    "config",
    "plugin",
    "adapter",
    "vault",
    "memory",
    "search",
    "doctor",
    "backlink",
    "handoff",
    "decision",
    "runbook",
]


def build(repo: Path, count: int) -> None:
    rng = random.Random(count)
    root = repo / ".ecc/memory"
    for scope in ("project", "team"):
        for kind in MEMORY_KINDS:
            (root / scope / f"{kind}s").mkdir(parents=True, exist_ok=True)
    (root / "project/.gitignore").write_text("*\n!.gitignore\n")
    for n in range(count):
        scope = "project" if rng.random() < 0.7 else "team"
        kind = rng.choice(MEMORY_KINDS)
        memory_id = f"mem_2026{1 + n % 12:02}{1 + n % 28:02}_{rng.getrandbits(80):020x}"
        body = "\n\n".join(
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 40)))
            for _ in range(rng.randint(2, 7))
        )
        memory = {
            "schema": "ecc.memory.v1", "id": memory_id,
            "title": " ".join(rng.choice(WORDS) for _ in range(4)).capitalize(),
            "kind": kind, "scope": scope, "trust": "unreviewed", "status": "active",
            "sourceHarness": rng.choice(["claude", "codex", "gemini"]),
            "targetHarnesses": ["all"], "tags": rng.sample(WORDS, rng.randint(0, 3)), "links": [],
            "createdAt": f"2026-{1 + n % 12:02}-{1 + n % 28:02}T10:00:00.000Z",
            "updatedAt": f"2026-{1 + n % 12:02}-{1 + n % 28:02}T10:00:00.000Z",
            "body": body,
        }  # fmt: skip
        (root / scope / f"{kind}s" / f"{memory_id}.md").write_text(
            serialize_memory_document(memory)
        )


def settle() -> None:
    """Flush written files and pause, so the kernel's writeback of one phase (the vault build,
    the cold index builds) does not land in the timings of the next."""
    os.sync()
    time.sleep(2)


# The floor: a plain-Python walk that lists every directory and lstats every name, nothing else.
WALK = """
import os, sys
def walk(path):
    for name in os.listdir(path):
        child = os.path.join(path, name)
        if os.path.isdir(child) and not os.path.islink(child):
            walk(child)
        else:
            os.lstat(child)
walk(sys.argv[1])
"""


def timed(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True)
    return (time.perf_counter() - started) * 1000


def output(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    return subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True).stdout.decode()


def start_daemon(ecc: str, repo: Path, env: dict[str, str], cache: Path) -> subprocess.Popen:
    """`ecc daemon`, once its tree watcher listens."""
    from ecc.runtime.watchclient import socket_path

    daemon = subprocess.Popen(
        [ecc, "daemon", "--interval", "600"],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not socket_path(cache).exists():
        if daemon.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("ecc daemon did not start its tree watcher")
        time.sleep(0.05)
    return daemon


def median(values: list[float]) -> str:
    return f"{statistics.median(values):.0f}"


# The cold build's floor: every file read (and, second, its frontmatter decoded) by plain Python.
READ_FLOOR = """
import json, os, sys
parse = sys.argv[2] == "parse"
def walk(path):
    for name in os.listdir(path):
        child = os.path.join(path, name)
        if os.path.isdir(child) and not os.path.islink(child):
            walk(child)
        elif name.endswith(".md"):
            with open(child, "rb") as file:
                text = file.read().decode()
            if parse:
                head, _, body = text[4:].partition("\\n---\\n")
                [json.loads(line.partition(": ")[2]) for line in head.split("\\n")]
walk(sys.argv[1])
"""


def timed_cpu(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall ms, the child's CPU ms: user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(args, cwd, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu * 1000


def tree_bytes(root: Path) -> int:
    return sum(path.stat().st_size for path in root.rglob("*") if path.is_file())


def cold_table(sizes: list[int], runs: int, against: str | None) -> None:
    """Cold search (the index built from nothing) at each size: wall and CPU medians, the
    index's size against the Markdown's, beside the read floors; with ``against``, that code's
    figures too, its runs interleaved with these. Target (issue 22, 2 cores): 50,000 under 4 s
    wall with the index no larger than the Markdown."""
    ecc = str(Path(sys.executable).with_name("ecc"))
    search = [ecc, "memory", "search", "migration rollout"]
    codes = [("this", None)] + ([("against", str(Path(against).resolve()))] if against else [])
    print(
        f"{'memories':>9} {'code':>8} {'cold wall':>10} {'cold cpu':>9} {'index MB':>9}"
        f" {'markdown MB':>12} {'read floor':>11} {'read+json floor':>16} {'load':>5}  (median ms)"
    )
    for size in sizes:
        work = Path(tempfile.mkdtemp(prefix="ecc-vault-cold-"))
        try:
            repo = work / "repo"
            repo.mkdir()
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
            build(repo, size)
            vault = repo / ".ecc/memory"
            markdown = sum(path.stat().st_size for path in vault.rglob("*.md"))
            settle()
            figures: dict[str, tuple[list[tuple[float, float]], int]] = {}
            for _ in range(runs):
                for name, path in codes:
                    cache = work / f"cache-{name}"
                    env = {
                        **os.environ,
                        "HOME": str(work),
                        "ECC_CACHE_DIR": str(cache),
                        "ECC_CONFIG_DIR": str(work / "config"),
                        "ECC_STATE_DIR": str(work / "state"),
                        "ECC_DATA_DIR": str(work / "data"),
                    }
                    if path is not None:
                        env["PYTHONPATH"] = path
                    timed(search, repo, env)  # the config and plugin caches; not timed
                    shutil.rmtree(cache / "memory-index", ignore_errors=True)
                    os.sync()
                    result = timed_cpu(search, repo, env)
                    times, _ = figures.get(name, ([], 0))
                    figures[name] = ([*times, result], tree_bytes(cache / "memory-index"))
            plain = {**os.environ, "HOME": str(work)}
            floors = [
                statistics.median(
                    timed([sys.executable, "-c", READ_FLOOR, str(vault), mode], repo, plain)
                    for _ in range(runs)
                )
                for mode in ("read", "parse")
            ]
            for name, (times, index_bytes) in figures.items():
                print(
                    f"{size:>9} {name:>8} {statistics.median(t[0] for t in times):>10.0f}"
                    f" {statistics.median(t[1] for t in times):>9.0f}"
                    f" {index_bytes / 1e6:>9.1f} {markdown / 1e6:>12.1f}"
                    f" {floors[0]:>11.0f} {floors[1]:>16.0f} {os.getloadavg()[0]:>5.1f}"
                )
        finally:
            shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,5000,50000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="the cold index build table only")
    parser.add_argument("--against", help="a checkout of other ecc code to time alongside (cold)")
    options = parser.parse_args()
    if options.cold:
        cold_table([int(part) for part in options.sizes.split(",")], options.runs, options.against)
        return
    ecc = str(Path(sys.executable).with_name("ecc"))
    search = [ecc, "memory", "search", "migration rollout"]
    search_json = [*search, "--json", "--limit", "100"]
    doctor = [ecc, "memory", "doctor"]
    columns = (
        ("memories", 9), ("cold search", 12), ("search", 7), ("doctor", 7),
        ("watched search", 15), ("watched doctor", 15), ("walk floor", 11),
        ("python -c pass", 15), ("same", 5), ("load", 5),
    )  # fmt: skip
    print(" ".join(f"{name:>{width}}" for name, width in columns), " (median ms)")
    for size in (int(part) for part in options.sizes.split(",")):
        work = Path(tempfile.mkdtemp(prefix="ecc-vault-bench-"))
        daemon = None
        try:
            repo = work / "repo"
            repo.mkdir()
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
            build(repo, size)
            cache = work / "cache"
            env = {
                **os.environ,
                "HOME": str(work),
                "ECC_CACHE_DIR": str(cache),
                "ECC_CONFIG_DIR": str(work / "config"),
                "ECC_STATE_DIR": str(work / "state"),
                "ECC_DATA_DIR": str(work / "data"),
            }
            settle()  # the vault's files were just written
            cold = []
            for _ in range(max(1, options.runs // 2)):
                shutil.rmtree(cache, ignore_errors=True)
                cold.append(timed(search, repo, env))
            shutil.rmtree(cache, ignore_errors=True)
            reference = output(search_json, repo, env)  # a full scan from nothing, ranked
            timed(search, repo, env)  # untimed: the config and plugin caches went with the index
            settle()  # the cold runs rewrote the index several times over
            same = output(search_json, repo, env) == reference
            warm = [timed(search, repo, env) for _ in range(options.runs)]
            doc = [timed(doctor, repo, env) for _ in range(options.runs)]
            daemon = start_daemon(ecc, repo, env, cache)
            same = same and output(search_json, repo, env) == reference  # settles under a token
            same = same and output(search_json, repo, env) == reference  # through the watcher
            watched = [timed(search, repo, env) for _ in range(options.runs)]
            watched_doc = [timed(doctor, repo, env) for _ in range(options.runs)]
            daemon.terminate()
            daemon.wait(timeout=60)
            daemon = None
            # This VM's speed drifts by up to 1.5x over minutes: the interpreter's own start-up,
            # timed alongside, shows which regime a line was measured in.
            idle = [timed([sys.executable, "-c", "pass"], repo, env) for _ in range(options.runs)]
            vault = str(repo / ".ecc/memory")
            walk = [
                timed([sys.executable, "-c", WALK, vault], repo, env) for _ in range(options.runs)
            ]
            cells = (
                str(size), median(cold), median(warm), median(doc), median(watched),
                median(watched_doc), median(walk), median(idle), "yes" if same else "NO",
                f"{os.getloadavg()[0]:.1f}",
            )  # fmt: skip
            print(
                " ".join(
                    f"{cell:>{width}}" for cell, (_, width) in zip(cells, columns, strict=True)
                )
            )
        finally:
            if daemon is not None:
                daemon.kill()
                daemon.wait()
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
