"""One ACP session's state as a user sees it, reduced from its `session/update` stream
(`state.py`): the transcript (`transcript.py`), tool calls (`tool_calls.py`), the commands the agent runs
itself (`shell.py`), the cut in a long message (`message_cut.py`)."""
