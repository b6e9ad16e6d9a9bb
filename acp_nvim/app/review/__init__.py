"""The review's notes: the comments and the reasons of rejections the user gives on the agent's changes, kept
per session (`note.py`), shown, listed, edited and removed (`notes.py`), and composed into the next prompt
(`compose.py`)."""
