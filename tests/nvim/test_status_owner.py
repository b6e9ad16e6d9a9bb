"""The status `state` has one owner, Python. Before the host answers, what Lua shows for a fact it recorded is
what Python's table (`acp_nvim/app/status_facts.json`) declares; the host's answer is what stays."""

from __future__ import annotations

from acp_nvim.app.status_facts import FACTS

from .conftest import Nvim

# The states the user saw, in order, from the moment the prompt is sent; and the state right after the call,
# in the same main-loop turn: before the host can have answered anything.
SEND_AND_WATCH = """
_G.acp_states = {}
vim.api.nvim_create_autocmd('User', { pattern = 'AcpNvimStatus', callback = function(ev)
  table.insert(_G.acp_states, ev.data.state)
end })
local sent = require('acp_nvim').prompt('look at this', { { kind = 'bogus' } })
return { sent, require('acp_nvim').status().state, require('acp_nvim').statusline() }
"""


def test_a_prompt_the_host_refuses_shows_running_at_once_then_the_hosts_state(nvim: Nvim) -> None:
    nvim.api.command("AcpStart ts")
    nvim.wait_state("ready")
    sent, shown, statusline = nvim.lua(SEND_AND_WATCH)
    running = FACTS.facts["prompt_submitted"].state
    assert (sent, shown) == (True, running)
    assert statusline.endswith(running)
    # The host refuses the attachment and says so; its status replaces what Lua showed.
    nvim.wait("#vim.tbl_filter(function(n) return n.msg:find('invalid attachment') end, acp_test.notes) > 0")
    nvim.wait_state("ready")
    states = nvim.lua("return _G.acp_states")
    assert states[0] == running and set(states[1:]) == {"ready"}, states
    assert nvim.lua("return require('acp_nvim').statusline()").endswith("ready")
    # What was typed is given back, not lost.
    prompt_lines = nvim.lua(
        "local chat = require('acp_nvim.ui.chat').chats[require('acp_nvim').status().session_id]"
        " return vim.api.nvim_buf_get_lines(chat.prompt_buf, 0, -1, false)"
    )
    assert prompt_lines == ["look at this"]
