"""The memory vault (``ecc.memory.v1``): ``service`` (the facade: init, save, handoff) with
``loading``, ``search``, ``ranking``, ``read`` and ``doctor``; ``format``, ``secrets``, ``safefs``,
``roots``, ``index`` and ``backend`` (the contract with memory backend plugins)."""
