"""Configuration: ``model`` (the pydantic schema and the layered loader: validate and write),
``view`` (the validated result cached as JSON, the one type the runtime passes around),
``overrides`` (``ecc -c``), ``profiles`` (agent profile inheritance) and ``quiet_hours``."""
