"""One queue of pickers: a question to the user (permission, sandbox, session, login, mode, option,
elicitation) waits while another one's picker is open, whoever asks. A real headless Neovim and the scripted
agent (official Python SDK); vim.ui.select is the recording stub of conftest."""

from __future__ import annotations

from pathlib import Path

from tests.nvim.conftest import Nvim
from tests.nvim.test_restart import wait_lines
from tests.nvim.test_sessions import Agent, selects, setup, wait_journal

MODES = {
    "currentModeId": "ask",
    "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
}
BRIEF = [{"id": "brief", "name": "Brief answers", "type": "boolean", "currentValue": False}]
ASK = {"permission": {"toolCall": {"toolCallId": "t1", "title": "Edit"}}}


def test_a_picker_waits_while_another_is_open(nvim: Nvim, tmp_path: Path) -> None:
    agent = Agent(
        tmp_path,
        "s",
        {
            "echo": False,
            "session": {"modes": MODES, "configOptions": BRIEF},
            "turns": [[ASK, {"text": "done"}]],
        },
    )
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    # The permission picker stays open (held); the mode picker is answered "code" when it opens.
    nvim.lua("acp_test.answers = { 'hold', 'code' }")
    nvim.lua("require('acp_nvim').prompt('go')")
    nvim.wait("acp_test.held ~= nil")
    nvim.api.command("AcpMode")
    # A command sent after :AcpMode and done by the agent: the host has taken up :AcpMode by now.
    nvim.api.command("AcpConfig brief on")
    wait_journal(nvim, agent, "session/set_config_option")
    assert [picker["prompt"] for picker in selects(nvim)] == ["Allow other: Edit?"], selects(nvim)

    nvim.lua("local held = acp_test.held acp_test.held = nil held({ id = 'allow' })")
    nvim.wait("#acp_test.selects == 2")
    assert selects(nvim)[1]["prompt"] == "Mode of s"
    nvim.wait("require('acp_nvim').status().mode == 'code'")
    wait_lines(nvim, "sess-1", "done")
    (answer,) = [e for e in agent.journal() if e["kind"] == "result"]
    assert answer["result"] == {"outcome": {"outcome": "selected", "optionId": "allow"}}
