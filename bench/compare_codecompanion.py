"""The streaming benchmark against codecompanion.nvim, for comparison (codecompanion is not part of the repo).

    .venv/bin/python bench/compare_codecompanion.py --codecompanion PATH [--plenary PATH] [--runs 5]

PATH is a checkout of https://github.com/olimorris/codecompanion.nvim (it needs plenary.nvim: give its
checkout with --plenary unless it sits beside PATH). The flood agent is configured as an ACP adapter extending
the built-in `gemini_cli` one (`adapters.acp`, as codecompanion documents for its ACP adapters), a chat is
opened, the prompt `words N` submitted, and the time until the chat buffer's last line ends with the last
word is measured inside Neovim with vim.uv.hrtime, as for acp.nvim. The same prompt through acp.nvim is
measured in the same run.

UNTESTED: codecompanion cannot be fetched in the environment where this was written. It follows
codecompanion's documented configuration (`adapters.acp.NAME = function() return
require("codecompanion.adapters").extend(...) end` and `interactions.chat.adapter`, v18 and later) and its Lua
API (`last_chat()`/`chat()`, `Chat:add_buf_message`, `Chat:submit`, `Chat.current_request`), checked against
its v18/v19 sources as stored for reading; if a release renamed those, adjust the Lua below. codecompanion
connects to the agent on a chat's first submit, so both turns go to one chat: the first (a small one) pays
for the connection, the second is measured once the first has finished.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a script: make the repository importable.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pynvim

from bench.flood_agent import final_text
from bench.harness import FLOOD_AGENT, NS_PER_S, NVIM, Neovim, median, ms, wait_until

SETUP_LUA = r"""
local python, agent = ...
require("codecompanion").setup({
  adapters = {
    acp = {
      flood = function()
        return require("codecompanion.adapters").extend("gemini_cli", {
          name = "flood",
          formatted_name = "Flood agent",
          commands = { default = { python, agent } },
          -- The flood agent offers no authentication: nothing to choose.
          defaults = { auth_method = nil, mcpServers = {} },
          env = {},
        })
      end,
    },
  },
  interactions = { chat = { adapter = "flood" } },
  opts = { log_level = "ERROR" },
})
"""

CHAT_LUA = r"""
local text, needle = ...
_G.cc_bench = { t0 = nil, t_done = nil }
local cc = require("codecompanion")
-- One chat for both turns: a new chat would connect (spawn, initialize, session/new) in the measured turn.
local chat = cc.last_chat() or cc.chat()
assert(chat, "codecompanion did not open a chat")
-- Stamp the first change after which the chat's last line ends with the awaited word.
vim.api.nvim_buf_attach(chat.bufnr, false, {
  on_lines = function(_, buf)
    if cc_bench.t_done == nil then
      local last = vim.api.nvim_buf_get_lines(buf, -2, -1, false)[1] or ""
      if last:sub(-#needle) == needle or last:sub(-#needle + 1) == needle:sub(1, -2) then
        cc_bench.t_done = vim.uv.hrtime()
        return true
      end
    end
  end,
})
chat:add_buf_message({ role = "user", content = text })
cc_bench.t0 = vim.uv.hrtime()
chat:submit()
"""


IDLE_LUA = "local c = require('codecompanion').last_chat(); return c ~= nil and c.current_request == nil"


def codecompanion_once(checkout: Path, plenary: Path, count: int, workdir: Path) -> float:
    argv = [NVIM, "--embed", "--headless", "--clean", "-n"]
    argv += ["--cmd", f"set rtp^={plenary}", "--cmd", f"set rtp^={checkout}"]
    nvim: Any = pynvim.attach("child", argv=argv)
    try:
        nvim.command(f"cd {workdir}")
        nvim.exec_lua(SETUP_LUA, sys.executable, str(FLOOD_AGENT))
        # The adapter connects on the first chat; a small warm-up turn keeps that out of the measurement.
        for text in ("words 100", f"words {count}"):
            needle = final_text("words", int(text.split()[1]))
            nvim.exec_lua(CHAT_LUA, text, needle)
            wait_until(lambda: nvim.exec_lua("return cc_bench.t_done ~= nil"), 120, f"{needle!r} in the chat")
            # The turn ends after its last word shows; a submit before that is refused ("in progress").
            wait_until(lambda: nvim.exec_lua(IDLE_LUA), 120, "the codecompanion turn to end")
        return float(nvim.exec_lua("return (cc_bench.t_done - cc_bench.t0)")) / NS_PER_S
    finally:
        with contextlib.suppress(Exception):
            nvim.command("qa!")
        with contextlib.suppress(Exception):
            nvim.close()


def acp_nvim_once(count: int, workdir: Path) -> float:
    nv = Neovim(workdir)
    try:
        nv.start_agent()
        nv.prompt_and_wait("words 100", final_text("words", 100))
        record = nv.prompt_and_wait(f"words {count}", final_text("words", count))
        return float(record["t_done"] - record["t0"]) / NS_PER_S
    finally:
        nv.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--codecompanion", type=Path, required=True, help="codecompanion.nvim checkout")
    parser.add_argument("--plenary", type=Path, default=None, help="plenary.nvim checkout")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--counts", type=int, nargs="*", default=[10_000, 100_000])
    args = parser.parse_args(argv)
    checkout = args.codecompanion.resolve()
    plenary = (args.plenary or checkout.parent / "plenary.nvim").resolve()
    for path in (checkout / "lua" / "codecompanion", plenary / "lua" / "plenary"):
        if not path.is_dir():
            parser.error(f"not found: {path}")
    scratch = Path(tempfile.mkdtemp(prefix="acp-compare-"))
    for count in args.counts:
        ours = [acp_nvim_once(count, scratch / f"acp-{count}-{i}") for i in range(args.runs)]
        theirs = []
        for i in range(args.runs):
            workdir = scratch / f"cc-{count}-{i}"
            workdir.mkdir(parents=True)
            theirs.append(codecompanion_once(checkout, plenary, count, workdir))
        print(
            f"words {count:,}: acp.nvim {ms(median(ours))}, codecompanion.nvim {ms(median(theirs))} "
            f"(medians of {args.runs}; last chunk visible in the chat after the prompt)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
