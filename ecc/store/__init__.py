"""ecc.store."""
