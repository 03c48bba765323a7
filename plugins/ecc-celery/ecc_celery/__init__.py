"""ecc executor plugin for Celery (see docs/distributed.md)."""
