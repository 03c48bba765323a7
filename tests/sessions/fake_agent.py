"""A fake ``claude`` CLI on PATH for follow-up tests: it records every invocation and keeps its
own conversations, so a test sees what each run was asked and what it remembered.

Each call appends ``{"argv", "cwd", "prompt", "resume"}`` to ``$FAKE_AGENT_LOG``, prints the
``stream-json`` lines the Claude adapter parses (``system/init`` with the session id, then a
``result``), and answers ``turn N: PROMPT (earlier: P1 | P2 ...)`` from the conversation it
stored under ``$FAKE_AGENT_DIR`` for that session id. With ``$FAKE_AGENT_GATE`` set, a run waits
(at most 60 s) for that file to exist before answering: a run that is still going.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

SCRIPT = r"""
import json, os, sys, time, uuid
from pathlib import Path

args = sys.argv[1:]
prompt = args[args.index("--") + 1] if "--" in args else ""
resume = None
for i, arg in enumerate(args):
    if arg.startswith("--resume="):
        resume = arg.split("=", 1)[1]
    elif arg == "--resume" and i + 1 < len(args):
        resume = args[i + 1]
with open(os.environ["FAKE_AGENT_LOG"], "a") as log:
    log.write(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "prompt": prompt,
                          "resume": resume}) + "\n")
sid = resume or "fake-" + uuid.uuid4().hex[:8]
print(json.dumps({"type": "system", "subtype": "init", "session_id": sid}), flush=True)
gate = os.environ.get("FAKE_AGENT_GATE")
deadline = time.monotonic() + 60
while gate and not os.path.exists(gate) and time.monotonic() < deadline:
    time.sleep(0.05)
store = Path(os.environ["FAKE_AGENT_DIR"]) / (sid + ".json")
history = json.loads(store.read_text()) if store.exists() else []
answer = f"turn {len(history) + 1}: {prompt} (earlier: {' | '.join(history)})"
store.write_text(json.dumps(history + [prompt]))
print(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                  "result": answer, "session_id": sid,
                  "usage": {"input_tokens": 3, "output_tokens": 2}}), flush=True)
"""


class FakeAgent:
    """Where the fake lives and what it saw; ``env`` goes to every ecc process of the test."""

    def __init__(self, base: Path, gate: Path | None = None) -> None:
        self.bin = base / "fake-bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        self.dir = base / "fake-conversations"
        self.dir.mkdir(exist_ok=True)
        self.log = base / "fake-agent.jsonl"
        program = self.bin / "claude"
        program.write_text(f"#!{sys.executable}\n{SCRIPT}")
        program.chmod(0o755)
        self.env = {
            "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}",
            "FAKE_AGENT_LOG": str(self.log),
            "FAKE_AGENT_DIR": str(self.dir),
        }
        if gate is not None:
            self.env["FAKE_AGENT_GATE"] = str(gate)

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]
