"""The editor services: what serves the agent's requests on the client (files, terminals, the sandbox,
permissions, elicitation), each with its rules beside it, on one port of editor mechanisms (`port.py`)."""
