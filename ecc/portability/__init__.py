"""One source for every harness: ``skills`` (SKILL.md validation), ``skillsync`` (installing
them) and ``harnessfiles`` (editing a harness's own JSON and TOML config safely, for hooks and MCP).
"""
