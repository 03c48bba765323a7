"""The plugin layer: ``discovery`` (entry points), ``loader`` (the one plugin set: lazy groups,
harness hooks, the hook path's lean set), ``index`` (what pluggy found, recorded for the hot
paths), ``calls`` (each implementation by name, failures kept apart) and ``sole`` (one plugin's
answer alone, for the memory search)."""
