"""Command-line entry: `python -m acp_nvim probe ...` (an agent's check) and `python -m acp_nvim mcp ...` (the
Neovim MCP server a session offers its agent)."""

from __future__ import annotations

import sys

USAGE = (
    "usage: python -m acp_nvim probe [--session] -- CMD ARGS...\n"
    "       python -m acp_nvim mcp --nvim ADDRESS --root DIR"
)


def main() -> int:
    args = sys.argv[1:]
    if args and args[0] == "mcp":
        from acp_nvim.nvim.mcp_main import main as mcp

        return mcp(args[1:])
    if not args or args[0] != "probe":
        print(USAGE, file=sys.stderr)
        return 2
    from acp_nvim.probe import main as probe

    return probe(args[1:])


if __name__ == "__main__":
    sys.exit(main())
