"""What every part of ecc runs on: ``paths`` (where files live), ``terminal`` (sanitised output),
``config`` (validated layers and the cached view), ``plugins`` (the one plugin layer) and
``startcache`` (the derived JSON that keeps the hot paths cheap). Imports only the contract."""
