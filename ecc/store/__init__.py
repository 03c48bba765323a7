"""The session store: ``models`` (states and records), ``schema`` (migrations), ``base`` (the
interface and the queries both dialects share), ``records`` (output, events, usage, tool calls,
notifications), ``sqlite`` and ``postgres`` (the two dialects) and ``open`` (which one a URL names).
Nothing heavy is imported with the package itself."""
