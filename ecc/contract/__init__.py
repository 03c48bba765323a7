"""ecc.contract."""
