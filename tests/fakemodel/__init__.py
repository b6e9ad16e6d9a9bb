"""A stdlib fake model API for the real agents' tests (`server.py`), and the network jail that runs it beside
the agent (`jail.py`)."""
