"""Write ``acp_nvim/app/config/lua_defaults.json``: the option defaults Lua draws with before the host has
answered, from the Structs of ``acp_nvim/app/config/options.py`` (their one owner).

Usage: ``python tools/gen_lua_defaults.py [--check]``; ``--check`` exits 1 when the committed file differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generated_files import write_or_check  # noqa: E402

from acp_nvim.app.config.settings import lua_defaults_json  # noqa: E402

OUTPUT = ROOT / "acp_nvim" / "app" / "config" / "lua_defaults.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    wanted = lua_defaults_json()
    return write_or_check(
        {OUTPUT: wanted},
        parser.parse_args().check,
        lambda path: f"{path.relative_to(ROOT)} is stale: run python tools/gen_lua_defaults.py",
    )
    OUTPUT.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
