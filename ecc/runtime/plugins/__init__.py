"""ecc.runtime.plugins."""
