"""Issue 29's fork, titles, rename and turn usage with the real agents offline (tests/nvim/test_real_agents.py
has the set-up): opencode 1.18 and codex-acp 2.6 fork (`session/fork`, unstable), codex titles its sessions,
takes `session/set_title` and reports each turn's tokens; gemini-cli 0.61 advertises none of these, and is
offered none of them: nothing is sent, nothing breaks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SCHEMA_PATH
from tests.fakemodel.server import chat_turns, read_log, responses_turns
from tests.nvim.conftest import Nvim
from tests.nvim.test_real_agents import TURN, RealAgent, pytestmark  # noqa: F401
from tests.schema_check import assert_valid

FORKED = "FORKED what did I ask before?"
# Pickers of these tests: the first session listed is chosen; a title asked for is typed.
PICK_FIRST = r"""
vim.ui.select = function(items, opts, on_choice)
  local entry = { prompt = opts.prompt, items = {} }
  for _, item in ipairs(items) do
    table.insert(entry.items, opts.format_item and opts.format_item(item) or tostring(item))
  end
  table.insert(acp_test.selects, entry)
  on_choice(items[1])
end
vim.ui.input = function(opts, on_confirm)
  table.insert(acp_test.inputs, opts)
  on_confirm("Renamed by the test")
end
acp_test.inputs = {}
"""


# The cursor put in the chat of session args[1], on the line that holds args[2].
ON_MESSAGE = r"""
local chat = require('acp_nvim.ui.chat').chats[select(1, ...)]
vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.buf)[1])
for row, line in ipairs(vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false)) do
  if line:find(select(2, ...), 1, true) then
    vim.api.nvim_win_set_cursor(0, { row, 0 })
  end
end
"""


@pytest.fixture
def real_agent(request: pytest.FixtureRequest, nvim: Nvim, tmp_path: Path) -> RealAgent:
    agent = RealAgent(nvim, tmp_path, request.param)
    script = json.loads(agent.script.read_text())
    script["steps"]["FORKED"] = [{"text": "Fork reply."}]
    agent.script.write_text(json.dumps(script))
    return agent


def _unstable_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.with_name("schema.unstable.json").read_text())  # type: ignore[no-any-return]


def _sent(nvim: Nvim, tmp_path: Path) -> list[dict[str, Any]]:
    """What the client sent, from :AcpLog save."""
    saved = tmp_path / "traffic.ndjson"
    saved.unlink(missing_ok=True)
    nvim.api.command(f"AcpLog save {saved}")
    nvim.wait(f"vim.fn.filereadable('{saved}') == 1")
    return [json.loads(line) for line in saved.read_text().splitlines()]


def _model_turns(agent: RealAgent) -> list[list[str]]:
    """Each request's user messages, as the fake model got them."""
    turns = responses_turns if agent.agent == "codex" else chat_turns
    return [
        [text for text, _ in turns(entry["body"])]
        for entry in read_log(agent.log)
        if isinstance(entry.get("body"), dict)
    ]


@pytest.mark.parametrize("real_agent", ["opencode", "codex"], indirect=True)
def test_a_fork_opens_a_new_chat_whose_prompt_reaches_the_model_with_the_earlier_conversation(
    real_agent: RealAgent, tmp_path: Path
) -> None:
    agent, nvim = real_agent, real_agent.nvim
    agent.start()
    assert "fork" in nvim.status()["session_features"], nvim.status()
    agent.prompt("REPLY say hello", "Hello from the fake model.")
    source = nvim.status()["session_id"]

    if agent.agent == "opencode":
        # The chat's key, on the agent's message (the whole session forks: the protocol names no point in it).
        nvim.lua(ON_MESSAGE, source, "Hello from the fake model.")
        nvim.lua("vim.api.nvim_feedkeys(vim.keycode('<leader>af'), 'mx', false)")
    else:
        nvim.api.command("AcpFork")
    nvim.wait("require('acp_nvim').status().session_id ~= args[1]", TURN, source)
    forked = nvim.status()["session_id"]
    nvim.wait_chat("Forked from", TURN)
    text = nvim.chat_text()
    if agent.agent == "opencode":
        # opencode replays the conversation before it answers the fork.
        assert text.index("REPLY say hello") < text.index("Hello from the fake model.") < text.index("Forked")
        assert "its history above is what the agent replayed of it" in text, text
    else:
        # codex-acp 2.6 replays nothing of a fork: the chat says so.
        assert "its history is not replayed" in text, text
    assert nvim.lua("return require('acp_nvim.ui.chat').chats[...] ~= nil", source)
    # The fork came with the agent's options: its model shows as the source's did.
    model = (
        nvim.lua("return require('acp_nvim.ui.chat').chats[...].header", source)
        .split("model: ")[1]
        .split(" │")[0]
    )
    nvim.wait(
        "require('acp_nvim.ui.chat').chats[args[1]].header:find(args[2], 1, true) ~= nil", 5, forked, model
    )

    agent.prompt(FORKED, "Fork reply.")
    assert nvim.status()["session_id"] == forked
    with_fork = [turns for turns in _model_turns(agent) if any("FORKED" in turn for turn in turns)]
    assert with_fork, _model_turns(agent)
    assert any("REPLY say hello" in turn for turn in with_fork[0]), with_fork[0]
    # The source chat is as it was.
    assert "Fork reply." not in "\n".join(nvim.lua("return require('acp_nvim.ui.chat').lines(...)", source))
    (fork,) = [e["message"] for e in _sent(nvim, tmp_path) if e.get("method") == "session/fork"]
    assert fork["params"]["sessionId"] == source, fork
    assert_valid(_unstable_schema(), "ForkSessionRequest", fork["params"])
    assert agent.escapes() == []
    assert nvim.errors() == []


@pytest.mark.parametrize("real_agent", ["codex"], indirect=True)
def test_codex_titles_the_session_takes_a_rename_and_reports_each_turns_usage(
    real_agent: RealAgent, tmp_path: Path
) -> None:
    agent, nvim = real_agent, real_agent.nvim
    agent.start()
    assert "title" in nvim.status()["session_features"], nvim.status()
    agent.prompt("REPLY say hello", "Hello from the fake model.")
    session_id = nvim.status()["session_id"]
    winbar = "vim.wo[vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats[args[1]].buf)[1]].winbar"

    # The agent's title shows in the status and the winbar.
    nvim.wait("require('acp_nvim').status().title ~= nil", TURN)
    title = nvim.status()["title"]
    assert title in nvim.lua(f"local args = {{...}} return {winbar}", session_id)

    # Each turn ends with its usage (the fake Responses API reports 10 in, 5 out per request).
    nvim.wait_chat("Usage: ", TURN)
    usage = nvim.status()["turn_usage"]
    assert usage["input"] >= 10 and usage["output"] >= 5 and usage["total"] >= 15, usage
    assert f"Usage: {usage['total']} tokens ({usage['input']} in, {usage['output']} out" in nvim.chat_text()

    nvim.lua(PICK_FIRST)
    nvim.api.command("AcpSessions rename")
    nvim.wait("require('acp_nvim').status().title == 'Renamed by the test'", TURN)
    assert "Renamed by the test" in nvim.lua(f"local args = {{...}} return {winbar}", session_id)
    (asked,) = nvim.lua("return acp_test.inputs")
    assert asked["default"] == title, asked
    (change,) = [e["message"] for e in _sent(nvim, tmp_path) if e.get("method") == "session/set_title"]
    assert change["params"] == {"sessionId": session_id, "title": "Renamed by the test"}, change
    assert_valid(_unstable_schema(), "SetSessionTitleRequest", change["params"])
    assert agent.escapes() == []
    assert nvim.errors() == []


@pytest.mark.parametrize("real_agent", ["gemini"], indirect=True)
def test_an_agent_without_fork_titles_or_archive_is_offered_none_and_sent_nothing(
    real_agent: RealAgent, tmp_path: Path
) -> None:
    agent, nvim = real_agent, real_agent.nvim
    agent.start()
    assert nvim.status()["session_features"] == [], nvim.status()
    agent.prompt("REPLY say hello", "Hello from the fake model.")
    session_id = nvim.status()["session_id"]
    # No usage reported: no line, no turn_usage.
    assert "Usage:" not in nvim.chat_text() and "turn_usage" not in nvim.status()
    words = nvim.lua("return vim.fn.getcompletion('AcpSessions ', 'cmdline')")
    assert "rename" not in words and "archive" not in words, words

    nvim.api.command("AcpFork")
    nvim.wait("#acp_test.notes > 0 and acp_test.notes[#acp_test.notes].msg:find('cannot fork') ~= nil")
    # The chat's fork key does the same, nothing more.
    buf = nvim.lua("return require('acp_nvim.ui.chat').chats[...].buf", session_id)
    nvim.lua("vim.api.nvim_set_current_win(vim.fn.win_findbuf(...)[1])", buf)
    count = len(nvim.notes())
    nvim.lua("vim.api.nvim_feedkeys(vim.keycode('<leader>af'), 'mx', false)")
    nvim.wait("#acp_test.notes > args[1]", 15, count)
    assert "cannot fork sessions" in nvim.notes()[-1]["msg"]
    nvim.api.command("AcpSessions archive")
    nvim.wait("acp_test.notes[#acp_test.notes].msg:find('cannot archive') ~= nil")

    assert nvim.status()["session_id"] == session_id
    methods = {entry.get("method") for entry in _sent(nvim, tmp_path)}
    assert not methods & {"session/fork", "session/set_title", "session/archive"}, methods
    assert agent.escapes() == []
    assert nvim.errors() == []
