"""The user's configuration: the options declared once (`options.py`), checked field by field
(`check.py`), in force and handed to each part (`settings.py`, `editor_options.py`, Lua's defaults in
`lua_defaults.json`), and the agents it names (`presets.py`, what each preset's agent routes through Neovim:
`agent_routes.py`)."""
