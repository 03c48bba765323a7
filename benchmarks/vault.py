"""Memory vault timings: whole-process `ecc memory search` (cold and warm index) and `doctor`.

Builds vaults of N memories (default 1,000 / 5,000 / 50,000; `--sizes 200,1000` to run small)
in a temporary git repository with an isolated HOME and cache, then prints medians.
Targets (2-core machine): warm search at 5,000 < 100 ms, at 50,000 < 400 ms; doctor at 5,000
< 700 ms. The floor printed beside them is a whole-process plain-Python walk of the vault
(listdir + one lstat a name), what any scan that stats every file costs at least.
"""

from __future__ import annotations

import argparse
import os
import random
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,5000,50000")
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    ecc = str(Path(sys.executable).with_name("ecc"))
    search = [ecc, "memory", "search", "migration rollout"]
    doctor = [ecc, "memory", "doctor"]
    print(
        f"{'memories':>9} {'cold search':>12} {'warm search':>12} {'doctor':>9}"
        f" {'walk floor':>10} {'python -c pass':>14}  (median ms)"
    )
    for size in (int(part) for part in options.sizes.split(",")):
        work = Path(tempfile.mkdtemp(prefix="ecc-vault-bench-"))
        try:
            repo = work / "repo"
            repo.mkdir()
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
            build(repo, size)
            env = {
                **os.environ,
                "HOME": str(work),
                "ECC_CACHE_DIR": str(work / "cache"),
                "ECC_CONFIG_DIR": str(work / "config"),
                "ECC_STATE_DIR": str(work / "state"),
            }
            settle()  # the vault's files were just written
            cold = []
            for _ in range(max(1, options.runs // 2)):
                shutil.rmtree(work / "cache", ignore_errors=True)
                cold.append(timed(search, repo, env))
            timed(search, repo, env)  # untimed: the config and plugin caches went with the index
            settle()  # the cold runs rewrote the index three times over
            warm = [timed(search, repo, env) for _ in range(options.runs)]
            doc = [timed(doctor, repo, env) for _ in range(options.runs)]
            # This VM's speed drifts by up to 1.5x over minutes: the interpreter's own start-up,
            # timed alongside, shows which regime a line was measured in.
            idle = [timed([sys.executable, "-c", "pass"], repo, env) for _ in range(options.runs)]
            vault = str(repo / ".ecc/memory")
            walk = [
                timed([sys.executable, "-c", WALK, vault], repo, env) for _ in range(options.runs)
            ]
            print(
                f"{size:>9} {statistics.median(cold):>12.0f} {statistics.median(warm):>12.0f} "
                f"{statistics.median(doc):>9.0f} {statistics.median(walk):>10.0f}"
                f" {statistics.median(idle):>14.0f}"
            )
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
