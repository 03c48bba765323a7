"""The web pages under ``/web/``, one module per page family (``auth``, ``sessions``,
``approvals``); each module's ``router(settings, pool, logins)`` returns a FastAPI
``APIRouter``, which :func:`ecc.web.app.mount` includes."""
