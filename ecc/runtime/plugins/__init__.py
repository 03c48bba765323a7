"""The plugin layer: ``discovery`` (entry points), ``loader`` (the one plugin set: lazy groups,
harness hooks, the hot paths' cheap forms), ``index`` (what pluggy found, recorded for the hot
paths) and ``calls`` (each implementation by name, failures kept apart)."""
