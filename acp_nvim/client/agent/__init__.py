"""The agent as the client runs and calls it: its process (`process.py`) and command
(`command.py`), the connection to it (`connection.py`), the handshake (`handshake.py`), its typed calls
(`calls.py`) within what it advertised (`capabilities.py`), the known agents' quirks (`quirks.py`), its
failures in one line (`failure.py`), its protocol trouble (`diagnostics.py`) and traffic (`traffic.py`)."""
