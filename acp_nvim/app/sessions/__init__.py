"""Sessions: opened, listed, reopened (`opening.py`), their modes and config options
(`modes.py`), their prompt turns (`turns.py`, the content `prompt_content.py`, the media types of
attachments `media_types.py`, the @-mentions of what Neovim knows `context_mentions.py` and `@diff`'s
`git_diff.py`), and the updates and permission requests that arrive for them (`incoming.py`)."""
