"""The application layer: agents and sessions as the user drives them, Neovim-free.

It reaches Neovim only through `port.NeovimPort` (implemented by `acp_nvim/nvim/port.py`), and its modules
import each other in one direction: views -> port -> lifecycle -> runs -> auth -> status -> chats,
session_modes -> opening -> turns, incoming -> commands -> application, which composes them all
(`prompt_content` stands alone). `tests/unit/test_layers.py` keeps it so, and keeps the Neovim adapters out.
"""
