"""The routes of the remote API under ``/v1/``, one module per resource.

Each module's ``router(settings, pool)`` returns a FastAPI ``APIRouter`` whose handlers share the
app's :class:`~ecc.remote.settings.Settings` and :class:`~ecc.remote.storepool.StorePool`; the
app includes them in a fixed order, which is also the order of the OpenAPI description.
"""
