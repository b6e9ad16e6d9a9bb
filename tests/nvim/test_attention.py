"""Signals when an agent needs the user (issue 30): `User AcpNvimTurnEnd` / `AcpNvimWaiting` / `AcpNvimError`
with their data, the opt-in notification (`opts.attention`) when the chat is out of view or Neovim out of
focus, and a permission waiting in another session shown by the statusline of every window."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench.harness import wait_until
from tests.nvim.agent_io import scripted_config, start_scenario
from tests.nvim.conftest import Nvim, setup_opts

# Records the User events the plugin fires, with their data.
RECORD_EVENTS = """
acp_test.events = {}
vim.api.nvim_create_autocmd("User", {
  pattern = { "AcpNvimTurnEnd", "AcpNvimWaiting", "AcpNvimError" },
  callback = function(ev)
    table.insert(acp_test.events, { name = ev.match, data = ev.data })
  end,
})
"""

PERMISSION = {
    "permission": {
        "toolCall": {"toolCallId": "t1", "title": "Edit main.py", "kind": "edit"},
        "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
    }
}


def recorder(tmp_path: Path) -> tuple[list[str], Path]:
    """A notification command that records its arguments (one JSON list a line), and that file."""
    script = tmp_path / "record.py"
    out = tmp_path / "notified.jsonl"
    script.write_text(
        "import json, sys\n"
        f"with open({str(out)!r}, 'a') as f:\n"
        "    f.write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    return [sys.executable, str(script), "--from-acp"], out


def notified(out: Path) -> list[list[str]]:
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


def statusline_of(nvim: Nvim, win: int) -> str:
    """A statusline of acp.nvim's, as window `win` shows it."""
    statusline = "%{v:lua.require'acp_nvim'.statusline()}"
    code = "return vim.api.nvim_eval_statusline(..., { winid = select(2, ...) }).str"
    return str(nvim.lua(code, statusline, win))


def events(nvim: Nvim) -> list[dict[str, Any]]:
    return nvim.lua("return acp_test.events")  # type: ignore[no-any-return]


def test_a_turn_ending_in_a_hidden_chat_fires_the_event_and_the_command(nvim: Nvim, tmp_path: Path) -> None:
    command, out = recorder(tmp_path)
    nvim.lua(RECORD_EVENTS)
    scenario = {"echo": False, "turns": [[{"text": "done"}, {"stop": "max_tokens"}]]}
    start_scenario(
        nvim,
        tmp_path,
        scenario,
        chat={"open_on_start": False},
        attention={"notify": "command", "command": command},
    )
    session = nvim.status()["session_id"]
    nvim.lua("require('acp_nvim').prompt('go')")
    wait_until(lambda: notified(out), 20, "the notification command")
    assert notified(out) == [["--from-acp", "s: turn ended (max tokens)"]]
    (event,) = events(nvim)
    assert event == {
        "name": "AcpNvimTurnEnd",
        "data": {
            "event": "TurnEnd",
            "agent": "s",
            "session_id": session,
            "session_ids": [session],
            "stop_reason": "max_tokens",
            "message": "s: turn ended (max tokens)",
        },
    }


def test_nothing_is_told_of_a_visible_focused_chat_until_focus_is_lost(nvim: Nvim, tmp_path: Path) -> None:
    """The chat in a window of this tab and Neovim focused: the event fires, no command runs. Focus lost: it
    runs. The chat in another tab only: it runs."""
    command, out = recorder(tmp_path)
    nvim.lua(RECORD_EVENTS)
    turns = [[{"text": f"turn {n}"}] for n in (1, 2, 3)]
    start_scenario(
        nvim, tmp_path, {"echo": False, "turns": turns}, attention={"notify": "command", "command": command}
    )
    nvim.wait(
        "#vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats[args[1]].buf) > 0",
        10,
        nvim.status()["session_id"],
    )

    def turn(n: int) -> None:
        nvim.lua("require('acp_nvim').prompt(...)", f"prompt {n}")
        nvim.wait(f"#acp_test.events == {n}")

    turn(1)
    nvim.api.command("doautocmd FocusLost")
    turn(2)
    wait_until(lambda: notified(out), 20, "the notification command")
    nvim.api.command("doautocmd FocusGained")
    nvim.api.command("tabnew")
    turn(3)
    wait_until(lambda: len(notified(out)) == 2, 20, "the second notification")
    # Turn 1, in view and focused, was not told.
    assert notified(out) == [["--from-acp", "s: turn ended"], ["--from-acp", "s: turn ended"]]
    assert [e["name"] for e in events(nvim)] == ["AcpNvimTurnEnd"] * 3


def test_a_permission_waiting_in_another_session_shows_in_another_tabs_statusline(
    nvim: Nvim, tmp_path: Path
) -> None:
    """Agent a's session asks permission; the user goes back to agent b's session (current) and works in
    another tab: that window's statusline says a waits, `User AcpNvimWaiting` fires, and the notification
    (vim.notify) tells it; once answered, the statusline no longer says it."""
    nvim.lua(RECORD_EVENTS)
    agents = {}
    for name, turns in (("a", [[PERMISSION, {"text": "edited"}]]), ("b", [])):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"echo": False, "session": {"sessionId": f"{name}-1"}, "turns": turns}))
        agents[name] = scripted_config(path)
    options = setup_opts(
        tmp_path, agents=agents, attention={"notify": "notify"}, chat={"open_on_start": False}
    )
    assert nvim.lua("return require('acp_nvim').setup(...)", options)
    nvim.api.command("AcpStart a")
    nvim.wait("require('acp_nvim').status().session_id == 'a-1'")
    nvim.api.command("AcpStart b")
    nvim.wait(
        "require('acp_nvim').status().session_id == 'b-1' and require('acp_nvim').status().state == 'ready'"
    )
    nvim.api.command("tabnew other.txt")
    win = nvim.api.current.window.handle
    assert "awaits permission" not in statusline_of(nvim, win)
    nvim.lua("acp_test.answers = { 'hold' }")
    assert nvim.lua("return require('acp_nvim.host.api').prompt('edit it', {}, 'a-1')")
    nvim.wait("acp_test.held ~= nil")
    nvim.wait("#acp_test.events == 1")
    # The user goes back to b's session (its chat focused): b is current, a's question still waits.
    nvim.lua("require('acp_nvim.host.api').focus('b-1')")
    nvim.wait("require('acp_nvim').status().session_id == 'b-1'")
    assert statusline_of(nvim, win) == "b ready · a awaits permission"
    (event,) = events(nvim)
    assert event["name"] == "AcpNvimWaiting"
    assert {k: event["data"][k] for k in ("agent", "session_id", "kind", "about")} == {
        "agent": "a",
        "session_id": "a-1",
        "kind": "permission",
        "about": "Edit main.py",
    }
    assert "acp.nvim: a asks permission: Edit main.py" in [n["msg"] for n in nvim.notes()]
    nvim.lua("acp_test.held(nil)")
    nvim.wait("#acp_test.events == 2")  # the turn's end
    assert "awaits permission" not in statusline_of(nvim, win)


def test_an_agent_that_dies_fires_the_error_event(nvim: Nvim, tmp_path: Path) -> None:
    nvim.lua(RECORD_EVENTS)
    start_scenario(nvim, tmp_path, {"echo": False, "turns": [[{"exit": 3}]]})
    nvim.lua("require('acp_nvim').prompt('go')")
    nvim.wait("#acp_test.events >= 1")
    event = events(nvim)[-1]
    assert event["name"] == "AcpNvimError"
    assert event["data"]["agent"] == "s" and "s stopped" in event["data"]["message"], event


def test_a_form_waiting_in_a_hidden_chat_fires_the_event_and_the_command(nvim: Nvim, tmp_path: Path) -> None:
    command, out = recorder(tmp_path)
    nvim.lua(RECORD_EVENTS)
    ask = {
        "mode": "url",
        "message": "Log in to Example",
        "elicitationId": "e1",
        "url": "https://example.test/a",
    }
    start_scenario(
        nvim,
        tmp_path,
        {"echo": False, "turns": [[{"elicit": ask}]]},
        chat={"open_on_start": False},
        attention={"notify": "command", "command": command},
    )
    nvim.lua("acp_test.answers = { 'hold' }")
    nvim.lua("require('acp_nvim').prompt('go')")
    wait_until(lambda: notified(out), 20, "the notification command")
    assert notified(out) == [["--from-acp", "s asks: Log in to Example"]]
    (event,) = events(nvim)
    assert event["name"] == "AcpNvimWaiting"
    assert {k: event["data"].get(k) for k in ("agent", "session_id", "kind", "about")} == {
        "agent": "s",
        "session_id": nvim.status()["session_id"],
        "kind": "elicitation",
        "about": "Log in to Example",
    }
    nvim.api.command("AcpCancel")
    nvim.wait_state("ready")
