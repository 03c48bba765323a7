"""The remote API: ``ecc remote serve`` (HTTP, :mod:`ecc.remote.app`) and its client.

Modules: :mod:`~ecc.remote.tokens` (bearer tokens: create, read, compare),
:mod:`~ecc.remote.remotes` (the client's list of named servers), :mod:`~ecc.remote.schemas`
(the request and response models, which are also the OpenAPI description),
:mod:`~ecc.remote.app` (the ASGI application) with :mod:`~ecc.remote.guard` (token, rate
limits, body caps), :mod:`~ecc.remote.errors` (the JSON error shape), :mod:`~ecc.remote.routes`
(one module per resource), :mod:`~ecc.remote.settings` and :mod:`~ecc.remote.storepool`;
:mod:`~ecc.remote.server` (uvicorn with timeouts, TLS and the loopback rule) and
:mod:`~ecc.remote.client` (stdlib HTTP client used by ``ecc run|sessions|logs|stop --remote``).
Nothing here is imported on the CLI's hot path.
"""
