"""The application layer: agents and sessions as the user drives them, Neovim-free.

It reaches Neovim only through `port.NeovimPort` (implemented by `acp_nvim.nvim.port`); its modules import
each other in one direction: port -> status structs -> registry -> auth -> status -> options, opening ->
turns, permissions -> commands. `tests/unit/test_layers.py` keeps it so.
"""
