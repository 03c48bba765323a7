"""ecc.portability."""
