"""Command-line entry: `python -m acp_nvim probe ...`."""

from __future__ import annotations

import sys


def main() -> int:
    args = sys.argv[1:]
    if not args or args[0] != "probe":
        print("usage: python -m acp_nvim probe [--session] -- CMD ARGS...", file=sys.stderr)
        return 2
    from acp_nvim.probe import main as probe

    return probe(args[1:])


if __name__ == "__main__":
    sys.exit(main())
