"""ecc's built-in plugins. Each module is registered through an entry point of the ``ecc``
distribution, exactly as a third-party plugin would be; the core never imports them."""
