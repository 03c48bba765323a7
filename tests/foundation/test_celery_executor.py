"""The celery executor plugin's hook, without a broker: which settings an executor carries."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from ecc_celery import plugin


def config(broker_file: Path, queue: str) -> SimpleNamespace:
    celery = {"broker_url_file": str(broker_file), "queue": queue}
    return SimpleNamespace(executors={"celery": celery})


def test_a_changed_config_gets_an_executor_with_its_queue(tmp_path: Path) -> None:
    """A long-lived process (the API, a test run) must not submit to the queue an earlier
    config named because the new config object happens to have the old one's id()."""
    broker = tmp_path / "broker-url"
    broker.write_text("redis://127.0.0.1:1/0\n")
    same = config(broker, "ecc.first")
    first = plugin.ecc_executor(name="celery", config=same)
    assert first is not None and first.settings.queue == "ecc.first"
    same.executors["celery"]["queue"] = "ecc.second"  # same object, as a reused id() would be
    second = plugin.ecc_executor(name="celery", config=same)
    assert second is not None and second.settings.queue == "ecc.second"
    again = plugin.ecc_executor(name="celery", config=config(broker, "ecc.first"))
    assert again is first  # equal settings share one executor (one Celery app)
    assert plugin.ecc_executor(name="local", config=same) is None
