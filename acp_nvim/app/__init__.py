"""The application layer: agents and sessions as the user drives them, Neovim-free.

It reaches Neovim only through `port.NeovimPort` (implemented by `acp_nvim/nvim/port.py`), and its modules
import each other in one direction: views -> port -> lifecycle -> runs -> auth -> status ->
chat.chats, sessions.modes -> sessions.opening -> sessions.turns, sessions.incoming -> commands ->
application, which composes them all (`sessions/prompt_content.py` stands alone). Its capabilities are
in folders: `chat/`, `config/`, `sessions/`, `editor/`, `permissions/`, `checkpoints/`, `registry/`.
`tests/unit/test_layers.py` keeps it so, and keeps the Neovim adapters out.
"""
