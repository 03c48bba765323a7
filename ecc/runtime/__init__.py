"""ecc.runtime."""
