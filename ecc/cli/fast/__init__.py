"""ecc.cli.fast."""
