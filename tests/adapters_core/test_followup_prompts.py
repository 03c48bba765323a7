"""A follow-up run of each real adapter: the runner hands the adapter's resume command the
message ``ecc send`` bound to the run as its prompt, with the captured harness session id."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecc.runtime.config import view
from ecc.sessions import launching
from ecc.sessions.runner import Runner
from ecc.store.models import State
from ecc.store.open import open_store

MESSAGE = "now add tests for the parser"


def _prompt_in(harness: str, argv: list[str]) -> bool:
    if harness == "opencode":  # the prompt's words after "--" (opencode joins them back)
        return " ".join(argv[argv.index("--") + 1 :]) == MESSAGE
    if harness == "gemini":
        return f"--prompt={MESSAGE}" in argv
    return argv[-1] == MESSAGE  # claude, codex: the prompt is the last argument


@pytest.mark.parametrize(
    ("harness", "resume"),
    [
        ("claude", "--resume=hs-1"),
        ("codex", "hs-1"),  # codex exec resume ... -- ID PROMPT
        ("gemini", "--resume=hs-1"),
        ("opencode", "--session=hs-1"),
    ],
)
def test_a_follow_up_run_resumes_with_the_message_as_its_prompt(
    harness: str, resume: str, tmp_path: Path
) -> None:
    config = view.view()
    with open_store(config=config) as store:
        store.insert_session(
            "f0110e0f0110", task="write the parser", harness=harness, state=State.COMPLETED,
            reason="test", project_dir=str(tmp_path), working_dir=str(tmp_path),
            harness_session_id="hs-1", run_kind="followup", attempts=2,
        )  # fmt: skip
        store.queue_message("f0110e0f0110", MESSAGE)
        assert store.bind_followup("f0110e0f0110") is not None
        session = store.get_session("f0110e0f0110")
    assert session is not None
    runner = Runner(session.id, config)
    try:
        argv = launching.build(runner.store, config, session, tmp_path).argv
    finally:
        runner.store.close()
    assert resume in argv, argv
    assert _prompt_in(harness, argv), argv
    assert "write the parser" not in " ".join(argv)  # the task is not sent again
    with open_store(config=config) as store:
        (turn,) = store.list_messages(session.id)
    assert (turn["run"], turn["status"], turn["text"]) == (2, "sent", MESSAGE)
