"""A small MCP (Model Context Protocol) server over stdio: the protocol's messages and its handshake, tools
listed and called. Neovim-free and tool-agnostic: what the tools are and do is the caller's (the plugin's
Neovim server composes it in `acp_nvim/nvim/mcp_main.py`)."""
