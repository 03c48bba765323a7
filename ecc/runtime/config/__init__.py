"""Configuration: ``model`` (the pydantic schema and the layered loader: validate and write),
``view`` (the validated result cached as JSON, the one type the runtime passes around),
``guarded`` (the project keys that need trust) and ``trust`` (the approvals of ``ecc trust``),
``overrides`` (``ecc -c``), ``profiles`` (agent profile inheritance) and ``quiet_hours``."""
