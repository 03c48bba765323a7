"""Semantic recall timings: `ecc memory search` with and without `--semantic` (ecc-semantic).

Builds a vault of N memories (default 200; `--size 50`) in a temporary git repository with an
isolated HOME and cache, then prints the medians of `--runs` whole-process runs of: the exact
search; the first `--semantic` search (the model loaded and every memory embedded: the cache is
deleted before each run); a warm `--semantic` search (every vector cached: the model loaded and
the query embedded); and the model's load and the embedding of one memory in-process.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import ecc_executable, time_command

TOPICS = ["authentication tokens", "database migrations", "the CI cache", "deploy windows",
          "flaky tests", "the login page", "code review", "release notes"]  # fmt: skip


def build(repo: Path, size: int, env: dict[str, str]) -> None:
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    ecc = ecc_executable()
    for number in range(size):
        topic = TOPICS[number % len(TOPICS)]
        body = f"Note {number} about {topic}: what we decided and why, in a few sentences. " * 3
        subprocess.run(
            [ecc, "memory", "save", "--title", f"{topic} #{number}", "--stdin"],
            input=body, text=True, cwd=repo, env=env, check=True, capture_output=True,
        )  # fmt: skip


def in_process(runs: int) -> tuple[float, float]:
    from ecc_semantic.encoder import Encoder

    loads, embeds = [], []
    text = "Note about authentication tokens: what we decided and why, in a few sentences. " * 3
    for _ in range(runs):
        start = time.perf_counter()
        model = Encoder()
        loads.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        model.encode([text] * 16)
        embeds.append((time.perf_counter() - start) * 1000 / 16)
    return statistics.median(loads), statistics.median(embeds)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ecc-bench-semantic-"))
    try:
        env = {**os.environ, "HOME": str(work / "home"), "ECC_CACHE_DIR": str(work / "cache"),
               "ECC_CONFIG_DIR": str(work / "config"), "ECC_STATE_DIR": str(work / "state"),
               "ECC_DATA_DIR": str(work / "data")}  # fmt: skip
        repo = work / "repo"
        build(repo, args.size, env)
        ecc = ecc_executable()
        query = "sign-in problems"
        exact = time_command([ecc, "memory", "search", query], args.runs, env=env, cwd=repo)
        cache = work / "cache" / "memory-index" / "semantic-embeddings.sqlite3"
        cold = []
        for _ in range(args.runs):
            cache.unlink(missing_ok=True)
            start = time.perf_counter()
            subprocess.run([ecc, "memory", "search", "--semantic", query], env=env, cwd=repo,
                           check=True, capture_output=True)  # fmt: skip
            cold.append((time.perf_counter() - start) * 1000)
        warm = time_command([ecc, "memory", "search", "--semantic", query], args.runs,
                            env=env, cwd=repo)  # fmt: skip
        load, embed = in_process(args.runs)
        print(f"memories: {args.size}, medians of {args.runs} runs (ms)")
        print(f"exact search:                 {exact:8.1f}")
        print(f"--semantic, nothing cached:   {statistics.median(cold):8.1f}")
        print(f"--semantic, vectors cached:   {warm:8.1f}")
        print(f"model load (in-process):      {load:8.1f}")
        print(f"one memory embedded:          {embed:8.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
