"""ecc.observability."""
