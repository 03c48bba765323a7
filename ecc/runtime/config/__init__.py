"""ecc.runtime.config."""
