"""The web pages' speed, against a real ``ecc web`` on loopback and a headless Chromium.

Usage: python benchmarks/web.py [--runs N] [--sessions N]

* **first paint of the sessions page** with ``--sessions`` (500) sessions in the store: the
  server's answer to ``GET /web/`` (the whole page, every row rendered) and the browser's
  first-contentful-paint after navigation; medians of ``--runs`` loads.
* **line to page**: a running shell session prints a line stamped with the time it wrote it;
  the page, following the session's server-sent events, records when the line appears in its
  output. The delay is the median over the lines of ``--runs`` x 4 lines (the runner's capture
  batching, the store, and the stream's 0.1 s poll).

Needs Debian's ``chromium`` (``make test`` installs it) and the dev extra's Playwright.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def environment(base: Path) -> dict[str, str]:
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


def fill_store(env: dict[str, str], count: int, root: Path) -> None:
    """``count`` finished sessions, as runners would have left them."""
    code = (
        "import sys\n"
        "from ecc.store.models import State\n"
        "from ecc.store.open import default_path, open_store\n"
        "with open_store(default_path()) as store:\n"
        f"    for i in range({count}):\n"
        "        store.insert_session(f'{i:012x}', task=f'task number {i}: make test', "
        "harness=('shell', 'claude', 'codex')[i % 3], state=State.COMPLETED, reason='bench', "
        f"project_dir='{root}', working_dir='{root}')\n"
    )
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def start_web(base: Path, env: dict[str, str], root: Path) -> tuple[subprocess.Popen[str], str]:
    config = base / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        f'[remote]\nallowed_roots = ["{root}"]\nrate_limit_per_minute = 100000\n'
    )
    token_file = base / "token"
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"bench-" + os.urandom(24).hex().encode() + b"\n")
    os.close(fd)
    proc = subprocess.Popen(
        [sys.executable, "-m", "ecc", "web", "--port", "0", "--log-level", "warning",
         "--token-file", str(token_file)],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    links: list[str] = []
    ready = threading.Event()

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            found = re.search(r"sign in at (\S+)", line)
            if found:
                links.append(found.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    if not ready.wait(60) or not links:
        proc.kill()
        raise SystemExit("ecc web did not start")
    return proc, links[0]


def server_answer_ms(port: int, cookie: str, runs: int) -> float:
    samples = []
    for _ in range(runs + 1):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        start = time.perf_counter()
        conn.request("GET", "/web/", headers={"Cookie": f"ecc_web={cookie}"})
        body = conn.getresponse().read()
        samples.append((time.perf_counter() - start) * 1000)
        conn.close()
        assert b"task number" in body
    return statistics.median(samples[1:])


FIRST_PAINT = """() => new Promise((resolve) => {
  new PerformanceObserver((list) => {
    const entry = list.getEntriesByName('first-contentful-paint')[0];
    if (entry) { resolve(entry.startTime); }
  }).observe({type: 'paint', buffered: true});
})"""

ARRIVALS = """() => {
  window.__arrivals = [];
  new MutationObserver(() => {
    for (const span of document.querySelectorAll('#output span.line:not([data-seen])')) {
      span.setAttribute('data-seen', '1');
      window.__arrivals.push([span.textContent, Date.now()]);
    }
  }).observe(document.getElementById('output'), {childList: true});
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=500)
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no chromium on PATH (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="ecc-web-bench-") as tmp:
        base = Path(tmp)
        env = environment(base)
        root = base / "projects"
        root.mkdir()
        fill_store(env, args.sessions, root)
        proc, link = start_web(base, env, root)
        port = int(link.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=chromium, args=["--no-sandbox"]
                )
                page = browser.new_page()
                page.goto(link)
                cookie = next(c["value"] for c in page.context.cookies() if c["name"] == "ecc_web")
                answer = server_answer_ms(port, cookie, args.runs)
                paints = []
                for _ in range(args.runs):
                    page.goto(f"http://127.0.0.1:{port}/web/")
                    paints.append(page.evaluate(FIRST_PAINT))
                print(f"sessions page, {args.sessions} sessions: server answer "
                      f"{answer:.1f} ms, first contentful paint {statistics.median(paints):.1f} ms"
                      f" (median of {args.runs})")  # fmt: skip

                delays: list[float] = []
                for _ in range(args.runs):
                    gate = base / f"gate-{len(delays)}"
                    task = (
                        f"while [ ! -e {gate} ]; do sleep 0.02; done; "
                        f'{sys.executable} -c "import time\n'
                        "for i in range(4):\n"
                        "    print(f'tick {time.time():.6f}', flush=True); time.sleep(0.4)\""
                    )
                    started = subprocess.run(
                        [sys.executable, "-m", "ecc", "start", "--harness", "shell",
                         "--no-worktree", "--json", task],
                        env=env, cwd=root, capture_output=True, text=True, check=True,
                    )  # fmt: skip
                    import json

                    session = json.loads(started.stdout)["id"]
                    page.goto(f"http://127.0.0.1:{port}/web/sessions/{session}")
                    page.evaluate(ARRIVALS)
                    gate.touch()
                    page.wait_for_selector("#stream-state >> text=The session ended.",
                                           timeout=60_000)  # fmt: skip
                    for text, arrived in page.evaluate("window.__arrivals"):
                        if text.startswith("tick "):
                            delays.append(arrived - float(text.split()[1]) * 1000)
                print(f"line to page: median {statistics.median(delays):.0f} ms, "
                      f"max {max(delays):.0f} ms ({len(delays)} lines)")  # fmt: skip
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=20)


if __name__ == "__main__":
    main()
