"""The Neovim MCP server's policy: which tools a session is offered and how it is started (`offer.py`), what
each tool may see and how its answer reads (`tools.py`), on the facts Neovim answers (`port.py`)."""
