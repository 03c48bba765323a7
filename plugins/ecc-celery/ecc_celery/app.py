"""The Celery application of ecc: placement and transport only.

Configured for the semantics ecc needs (shared/spec/distributed.md, sections 4 and 7):

* early ack (``task_acks_late=False``) and no retries: Celery never re-runs a session on its own
  account; a redelivery that happens anyway is refused by the runner's claim and recorded;
* ``task_id`` = session id, so revoke and the worker logs name the session;
* prefetch 1 and the prefork pool (``revoke(terminate=True)`` needs processes);
* no result backend: Celery's task state is never read as session state (it shows SUCCESS for a
  refused duplicate and REVOKED for a killed session). The store is the truth.
"""

from __future__ import annotations

from typing import Any

from ecc_celery.settings import CelerySettings


def make_app(settings: CelerySettings) -> Any:
    from celery import Celery

    app = Celery("ecc", broker=settings.broker_url, set_as_current=False)
    app.conf.update(
        task_acks_late=False,
        task_reject_on_worker_lost=False,
        task_default_queue=settings.queue,
        task_ignore_result=True,
        result_backend=None,
        task_serializer="json",
        accept_content=["json"],
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
        worker_redirect_stdouts=False,
        worker_send_task_events=False,
        task_send_sent_event=False,
        worker_enable_remote_control=True,  # revoke(terminate=True) is the fast stop
        broker_connection_retry_on_startup=True,
        worker_cancel_long_running_tasks_on_connection_loss=False,
        broker_transport_options={"socket_timeout": 10, "socket_connect_timeout": 5},
    )

    @app.task(name="ecc.run_session", bind=True, acks_late=False, max_retries=0, ignore_result=True)
    def run_session(task: Any, session_id: str) -> str:
        from ecc.sessions.runner import run_remote_session

        return run_remote_session(session_id, host=task.request.hostname)

    return app
