"""A session's chat: from its registration to its end (`chats.py`), and what it shows, as view
models Lua draws (`view.py`, tool calls `tool_call_view.py`, the lines they are made of `lines.py`, where a
long line goes on `line_breaks.py`) and the ops that carry them (`ops.py`)."""
