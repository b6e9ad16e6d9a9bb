"""The host bootstrap, configuration, start failures and the status API, in a real headless Neovim."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.nvim.agent_io import scripted_config
from tests.nvim.conftest import INSTRUMENT, Nvim, configure, help_tags, setup_opts


def scripted(tmp_path: Path, scenario: dict[str, Any], name: str = "scenario") -> dict[str, Any]:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(scenario))
    return scripted_config(path)


def assert_responsive(nvim: Nvim) -> None:
    assert nvim.lua("return 1 + 1") == 2
    nvim.api.command("enew")
    nvim.api.current.buffer[:] = ["still editing"]
    assert nvim.api.current.buffer[:] == ["still editing"]


def test_host_starts_through_the_plugins_own_registration(nvim: Nvim) -> None:
    info = nvim.lua("return require('acp_nvim.host').ensure()")
    assert info["python"] == sys.executable
    assert set(info["versions"]) == {"pynvim", "msgspec", "anyio"}
    assert all(info["versions"].values())
    assert nvim.lua("return vim.fn['remote#host#IsRunning']('acp_nvim')") == 1
    # No :UpdateRemotePlugins manifest, and the user's python3 provider was never involved.
    manifest = Path(nvim.lua("return vim.fn.stdpath('data')")) / "rplugin.vim"
    assert not manifest.exists()
    assert nvim.lua("return vim.g.python3_host_prog") is None
    assert nvim.lua("return vim.fn['remote#host#IsRunning']('python3')") == 0


BAD_OPTIONS = {"chat": {"width": "wide", "colour": 1}, "agents": {"x": {"cmd": 3}}, "bogus": True}


def assert_names_the_bad_fields(message: str) -> None:
    assert "unknown option `bogus`" in message
    assert "`chat.width` must be a number, got string" in message
    assert "unknown option `chat.colour`" in message
    assert "`agents.x.cmd` must be a string, got number" in message
    assert "stack traceback" not in message


def test_config_errors_name_the_field(nvim: Nvim) -> None:
    ok = nvim.lua("return require('acp_nvim').setup(...)", {"python": sys.executable, **BAD_OPTIONS})
    # The host owns these options: setup() starts no host and names only the ones read before one runs.
    assert ok is True
    assert nvim.lua("return require('acp_nvim.host').info()") is None
    assert not nvim.notes()
    # The host names them as soon as it starts (as a command, a prestart or the warm-up starts it).
    nvim.lua("require('acp_nvim.host').start()")
    nvim.wait("#acp_test.notes > 0")
    (message,) = nvim.errors()
    assert message.startswith("acp.nvim: invalid options (defaults used for these):")
    assert_names_the_bad_fields(message)


def test_bad_options_are_named_once_however_often_the_host_starts(nvim: Nvim, tmp_path: Path) -> None:
    opts = {**setup_opts(tmp_path), **BAD_OPTIONS}
    opts["agents"] = {**setup_opts(tmp_path)["agents"], **BAD_OPTIONS["agents"]}  # type: ignore[dict-item]
    nvim.lua("return require('acp_nvim').setup(...)", opts)
    nvim.api.command("AcpStart ts")
    nvim.wait_state("ready")
    (message,) = nvim.errors()
    assert_names_the_bad_fields(message)
    # The agent started all the same, on the defaults of the fields named.
    assert nvim.lua("return require('acp_nvim.config').options.chat.width") == 80
    pid = nvim.lua("return require('acp_nvim.host').info().pid")
    os.kill(pid, 9)
    nvim.wait("require('acp_nvim.host').info() == nil")
    nvim.lua("require('acp_nvim.host').ensure()")
    assert len([m for m in nvim.errors() if "invalid options" in m]) == 1


def test_setup_while_the_host_runs_is_validated_at_once(nvim: Nvim, tmp_path: Path) -> None:
    nvim.lua("require('acp_nvim.host').ensure()")
    configure(nvim, tmp_path, chat={"width": 100, "position": "middle"})
    nvim.wait("#acp_test.notes > 0")
    (message,) = nvim.errors()
    assert '`chat.position` must be one of "right", "left", "bottom", "current", got "middle"' in message
    assert nvim.lua("return require('acp_nvim.config').options.chat.width") == 100
    # A table without problems is accepted silently, and replaces the last one.
    assert configure(nvim, tmp_path)
    nvim.wait("require('acp_nvim.config').is_configured()")
    assert nvim.lua("return require('acp_nvim.config').options.chat.width") == 80
    assert len(nvim.errors()) == 1


def test_a_start_right_after_setup_uses_the_new_table(nvim: Nvim, tmp_path: Path) -> None:
    """setup() while the host runs, then :AcpStart at once: the host has the new agents before the start
    (one channel, in order), without Lua waiting for its answer."""
    nvim.lua("require('acp_nvim.host').ensure()")
    agents = {"late": setup_opts(tmp_path)["agents"]["ts"]}
    nvim.lua(
        "require('acp_nvim').setup(...); vim.cmd('AcpStart late')",
        setup_opts(tmp_path, agents=agents, default_agent="late"),
    )
    nvim.wait_state("ready")
    assert nvim.status()["agent_name"] == "late"
    assert not nvim.errors()


def test_checkhealth_reports_a_bad_option(nvim: Nvim, tmp_path: Path) -> None:
    assert configure(nvim, tmp_path, chat={"width": "wide"}, log={"level": "loud"}) is False
    nvim.api.command("checkhealth acp_nvim")
    report = "\n".join(nvim.api.current.buffer[:])
    assert "invalid option (its default is used): `chat.width` must be a number, got string" in report, report
    assert 'invalid option (its default is used): `log.level` must be one of "debug"' in report, report


def test_old_neovim_is_refused_with_a_clear_message(nvim: Nvim) -> None:
    ok = nvim.lua(
        """
        local has = vim.fn.has
        vim.fn.has = function(feature) if feature == 'nvim-0.11' then return 0 end return has(feature) end
        local ok = require('acp_nvim').setup({})
        vim.fn.has = has
        return ok
        """
    )
    assert ok is False
    assert "requires Neovim 0.11 or newer" in nvim.errors()[-1]


def test_checkhealth_names_the_supported_version_on_an_older_neovim(nvim: Nvim) -> None:
    nvim.lua(
        """
        local has = vim.fn.has
        vim.fn.has = function(feature) if feature == 'nvim-0.11' then return 0 end return has(feature) end
        vim.cmd('checkhealth acp_nvim')
        vim.fn.has = has
        """
    )
    report = "\n".join(nvim.api.current.buffer[:])
    assert "acp.nvim needs 0.11 or newer" in report, report
    assert_responsive(nvim)


def test_agent_info_title_and_version_in_status_and_statusline(nvim: Nvim, tmp_path: Path) -> None:
    info = {"name": "scripted-agent", "title": "Scripted Agent", "version": "1.2.3"}
    configure(nvim, tmp_path, agents={"scripted": scripted(tmp_path, {"agentInfo": info})})
    nvim.lua(
        """
        _G.acp_events = {}
        vim.api.nvim_create_autocmd('User', { pattern = 'AcpNvimStatus', callback = function(ev)
          table.insert(acp_events, ev.data.state)
        end })
        """
    )
    nvim.api.command("AcpStart scripted")
    nvim.wait_state("ready")
    status = nvim.status()
    assert status["agent"] == {"name": "scripted-agent", "title": "Scripted Agent", "version": "1.2.3"}
    assert status["protocol_version"] == 1
    assert status["session_id"]
    assert nvim.lua("return require('acp_nvim').statusline()") == "Scripted Agent 1.2.3 ready"
    nvim.lua("require('acp_nvim').prompt('hello')")
    nvim.wait_chat("hello")
    nvim.wait_state("ready")
    nvim.api.command("AcpStop")
    nvim.wait_state("stopped")
    events = nvim.lua("return acp_events")
    assert events[0] == "starting" and "running" in events and events[-1] == "stopped"
    assert "ready" in events[events.index("running") :]


def test_what_a_first_prompt_needs_is_loaded_once_an_agent_starts(nvim: Nvim, tmp_path: Path) -> None:
    """The disk watch cost the user's first prompt ~1.5 ms more than the next ones (a cold `require`)."""
    configure(nvim, tmp_path, agents={"scripted": scripted(tmp_path, {})})
    loaded = "package.loaded['acp_nvim.editor.fs.disk_watch'] ~= nil"
    assert nvim.lua(f"return {loaded}") is False
    nvim.api.command("AcpStart scripted")
    nvim.wait_state("ready")
    nvim.wait(loaded, 5)


def test_name_shown_when_the_agent_has_no_title(nvim: Nvim, tmp_path: Path) -> None:
    agent = scripted(tmp_path, {"agentInfo": {"name": "plain-agent", "version": "0.1"}})
    configure(nvim, tmp_path, agents={"plain": agent})
    nvim.api.command("AcpStart plain")
    nvim.wait_state("ready")
    assert nvim.lua("return require('acp_nvim').statusline()") == "plain-agent 0.1 ready"


def test_missing_command_names_the_install_hint(nvim: Nvim, tmp_path: Path) -> None:
    configure(
        nvim, tmp_path, agents={"ghost": {"cmd": "acp-ghost-agent-xyz", "install_hint": "npm i -g ghost"}}
    )
    nvim.api.command("AcpStart ghost")
    nvim.wait_state("error")
    (message,) = nvim.errors()
    assert "acp-ghost-agent-xyz" in message and "npm i -g ghost" in message
    assert nvim.status()["error"] == message.removeprefix("acp.nvim: ")
    assert_responsive(nvim)


def test_preset_install_hint(nvim: Nvim, tmp_path: Path) -> None:
    nvim.api.command("AcpStart codex")  # codex-acp is not installed here
    nvim.wait_state("error")
    assert "npm install -g @agentclientprotocol/codex-acp" in nvim.errors()[0]


def test_agent_that_exits_at_once(nvim: Nvim, tmp_path: Path) -> None:
    configure(nvim, tmp_path, agents={"boom": {"cmd": "sh", "args": ["-c", "echo boom >&2; exit 3"]}})
    nvim.api.command("AcpStart boom")
    nvim.wait_state("error")
    (message,) = nvim.errors()
    assert "exited with code 3" in message and "boom" in message
    assert_responsive(nvim)


def test_version_mismatch(nvim: Nvim, tmp_path: Path) -> None:
    configure(nvim, tmp_path, agents={"future": scripted(tmp_path, {"protocolVersion": 99})})
    nvim.api.command("AcpStart future")
    nvim.wait_state("error")
    (message,) = nvim.errors()
    assert "protocol version 99" in message
    assert_responsive(nvim)


def test_handshake_timeout(nvim: Nvim, tmp_path: Path) -> None:
    configure(nvim, tmp_path, handshake_timeout=1, agents={"mute": {"cmd": "sh", "args": ["-c", "sleep 30"]}})
    nvim.api.command("AcpStart mute")
    nvim.wait_state("error")
    (message,) = nvim.errors()
    assert "did not answer initialize within 1 s" in message
    assert_responsive(nvim)


def test_unknown_agent_name(nvim: Nvim) -> None:
    nvim.api.command("AcpStart nosuchagent")
    # The host (the configuration's owner) says so.
    nvim.wait_state("error")
    assert 'unknown agent "nosuchagent"' in nvim.errors()[0]
    assert nvim.status()["agent_name"] == "nosuchagent"


def test_agent_name_completion(nvim: Nvim) -> None:
    names = nvim.lua("return vim.fn.getcompletion('AcpStart ', 'cmdline')")
    assert {"claude", "gemini", "codex", "goose", "opencode", "fast-agent", "demo", "ts"} <= set(names)
    assert nvim.lua("return vim.fn.getcompletion('AcpStart ge', 'cmdline')") == ["gemini"]


@pytest.fixture
def bare_nvim(nvim_clean: Any) -> Nvim:
    session = Nvim(nvim_clean)
    session.lua(INSTRUMENT)
    return session


def test_python_without_the_dependencies_says_what_to_run(bare_nvim: Nvim, tmp_path: Path) -> None:
    # An interpreter without site-packages: no pynvim, msgspec or anyio.
    python = tmp_path / "python-nodeps"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} -S "$@"\n')
    python.chmod(0o755)
    bare_nvim.lua("require('acp_nvim').setup(...)", setup_opts(tmp_path, python=str(python)))
    bare_nvim.api.command("AcpStart ts")
    # The interpreter is spawned and :AcpStart returns at once; the failure arrives when it exits.
    assert bare_nvim.state() == "starting"
    bare_nvim.wait_state("error")
    (message,) = bare_nvim.errors()
    assert "has no module" in message
    assert f"{python} -m pip install" in message
    assert_responsive(bare_nvim)


def test_host_that_never_answers_is_given_up(bare_nvim: Nvim, tmp_path: Path) -> None:
    python = tmp_path / "python-mute"
    python.write_text("#!/bin/sh\nexec sleep 30\n")
    python.chmod(0o755)
    bare_nvim.lua("require('acp_nvim').setup(...)", setup_opts(tmp_path, python=str(python)))
    bare_nvim.lua("require('acp_nvim.host').start_timeout_ms = 300")
    bare_nvim.api.command("AcpStart ts")
    assert bare_nvim.state() == "starting"
    bare_nvim.wait_state("error")
    (message,) = bare_nvim.errors()
    assert "did not start within" in message
    assert bare_nvim.lua("return require('acp_nvim.host').info()") is None
    assert_responsive(bare_nvim)


def test_python_not_found_points_at_the_build_step(bare_nvim: Nvim, tmp_path: Path) -> None:
    bare_nvim.lua("require('acp_nvim').setup(...)", setup_opts(tmp_path, python=str(tmp_path / "nope")))
    bare_nvim.api.command("AcpStart ts")
    assert bare_nvim.state() == "error"
    (message,) = bare_nvim.errors()
    assert "Python not found" in message and "require('acp_nvim.build').run()" in message


def test_private_environment_is_the_default_interpreter(bare_nvim: Nvim) -> None:
    bare_nvim.lua("require('acp_nvim').setup({})")
    python = bare_nvim.lua("return require('acp_nvim.config').python()")
    data = bare_nvim.lua("return vim.fn.stdpath('data')")
    assert python == os.path.join(data, "acp_nvim", "venv", "bin", "python")


def test_checkhealth(nvim: Nvim, tmp_path: Path) -> None:
    agent = scripted(tmp_path, {"agentInfo": {"name": "probe-me", "title": "Probe Me", "version": "2.0"}})
    configure(nvim, tmp_path, agents={"probe": agent}, default_agent="probe")
    nvim.api.command("checkhealth acp_nvim")
    report = "\n".join(nvim.api.current.buffer[:])
    assert "OK Neovim 0.11" in report
    assert "OK remote plugin registered" in report
    assert "OK pynvim 0.6.0" in report and "OK msgspec" in report and "OK anyio" in report
    assert "codex: codex-acp not found" in report
    assert "npm install -g @agentclientprotocol/codex-acp" in report
    assert "OK initialize: Probe Me 2.0 (protocol 1)" in report, report


def test_stop_and_restart(nvim: Nvim) -> None:
    nvim.api.command("AcpStart ts")
    nvim.wait_state("ready")
    first = nvim.status()["session_id"]
    nvim.api.command("AcpRestart")
    nvim.wait(
        "require('acp_nvim').status().state == 'ready'"
        " and require('acp_nvim').status().session_id ~= args[1]",
        20,
        first,
    )
    # The new chat replaced the old one in the same windows (no pile of splits).
    assert nvim.lua("return #vim.api.nvim_tabpage_list_wins(0)") == 3
    nvim.api.command("AcpChat")
    assert nvim.lua("return vim.api.nvim_buf_get_name(0)").endswith("/prompt")
    assert nvim.lua("return vim.bo.filetype") == "acp_nvim_prompt"
    nvim.api.command("AcpStop")
    nvim.wait_state("stopped")
    assert nvim.status().get("session_id") is None
    assert nvim.lua("return require('acp_nvim').statusline()") == "ts stopped"
    assert not nvim.errors()


def test_batched_calls_run_in_order_with_their_arguments(nvim: Nvim) -> None:
    """What the host sends as one RPC runs as the separate calls would: in order, nil arguments kept,
    and a failing call neither stops the others nor goes unreported."""
    calls = [
        ["acp_test_batch = { ... }", [1, None, "three"], 3],
        ["acp_test_batch.count = select('#', ...)", [None, None], 2],
        ["error('boom')", [], 0],
        ["acp_test_batch.after = true", [], 0],
    ]
    ok, err = nvim.lua("return { pcall(require('acp_nvim.host.batch').run, ...) }", calls)
    assert ok is False and "boom" in err
    assert nvim.lua("return { acp_test_batch[1], acp_test_batch[2] == nil, acp_test_batch[3] }") == [
        1,
        True,
        "three",
    ]
    assert nvim.lua("return { acp_test_batch.count, acp_test_batch.after }") == [2, True]


def test_help_tags(nvim: Nvim, tmp_path: Path) -> None:
    tags = help_tags(nvim, tmp_path)
    for tag in [
        ":AcpStart",
        ":AcpStop",
        ":AcpRestart",
        ":AcpChat",
        ":AcpPrompt",
        ":AcpCancel",
        "acp_nvim-options",
        "acp_nvim.python",
        "acp_nvim.agents",
        "acp_nvim.default_agent",
        "acp_nvim.chat.position",
        "acp_nvim.chat.highlight_max_bytes",
        "acp_nvim.chat.long_line_bytes",
        "AcpNvimStatus",
        "acp_nvim.status()",
        "acp_nvim.statusline()",
        "acp_nvim-highlights",
        "AcpChatDiffAdd",
        "acp_nvim-troubleshooting",
        "acp_nvim-build",
    ]:
        assert tag in tags, tag
    assert not nvim.notes()


def agent_processes(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if marker in cmdline:
                pids.append(int(entry.name))
    return pids


def test_quitting_neovim_stops_the_agent_and_the_host(nvim_clean: Any, tmp_path: Path) -> None:
    import time

    session = Nvim(nvim_clean)
    session.lua(INSTRUMENT)
    marker = f"quit-{os.getpid()}-{tmp_path.name}"
    agent = scripted(tmp_path, {}, name=marker)
    session.lua("require('acp_nvim').setup(...)", setup_opts(tmp_path, agents={"q": agent}))
    session.api.command("AcpStart q")
    session.wait_state("ready")
    host_pid = session.lua("return require('acp_nvim.host').info().pid")
    assert agent_processes(marker)
    with contextlib.suppress(EOFError, OSError):
        session.api.command("qa!")  # Neovim exits while answering: the channel just ends
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (agent_processes(marker) or Path(f"/proc/{host_pid}").exists()):
        time.sleep(0.05)  # nothing to wait on: these processes belong to no one we can join
    assert not agent_processes(marker)
    assert (
        not Path(f"/proc/{host_pid}").exists() or "Z" in Path(f"/proc/{host_pid}/stat").read_text().split()[2]
    )
    log = (tmp_path / "acp_nvim.log").read_text()
    # The quit is routine: said at info with its reason, no warning that the agent was killed.
    assert "WARNING" not in log and "ERROR" not in log, log
    assert re.search(
        r"INFO acp_nvim.controller: q ended: Neovim is quitting \(agent \S+ was killed by", log
    ), log


def test_start_returns_before_the_host_is_up_and_commands_queue_in_order(nvim: Nvim, tmp_path: Path) -> None:
    marker = f"queued-{os.getpid()}-{tmp_path.name}"
    configure(nvim, tmp_path, agents={"q": scripted(tmp_path, {}, name=marker)})
    # :AcpStart and :AcpStop in one go: the stop waits in the channel behind the start, in order.
    early = nvim.lua(
        """
        vim.cmd('AcpStart q')
        local host = require('acp_nvim.host')
        local early = { ready = host.is_ready(), state = require('acp_nvim').status().state }
        vim.cmd('AcpStop')
        return early
        """
    )
    assert early == {"ready": False, "state": "starting"}
    nvim.wait("require('acp_nvim.host').is_ready()")
    nvim.wait_state("stopped")
    assert not nvim.errors()
    # Started after all, then stopped: nothing of the agent is left running.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and agent_processes(marker):
        time.sleep(0.05)  # nothing to wait on: the agent belongs to the host
    assert not agent_processes(marker)
    nvim.api.command("AcpStart q")
    nvim.wait_state("ready")


def assert_first_start_uses_the_prestarted_host(nvim: Nvim) -> None:
    nvim.wait("require('acp_nvim.host').is_ready()")
    pid = nvim.lua("return require('acp_nvim.host').info().pid")
    nvim.api.command("AcpStart")
    nvim.wait_state("ready")
    assert nvim.lua("return require('acp_nvim.host').info().pid") == pid


def test_prestart_host_starts_it_in_the_background(nvim: Nvim, tmp_path: Path) -> None:
    """With prestart_host the host is up before any command, and the first :AcpStart does not start one."""
    assert nvim.lua("return require('acp_nvim.host').info()") is None
    assert configure(nvim, tmp_path, prestart_host=True)
    assert_first_start_uses_the_prestarted_host(nvim)
    assert not nvim.errors()


# Waits until Neovim has run the UIEnter autocommands and whatever they scheduled (the test's autocommand is
# defined after the plugin's, and scheduled callbacks run in order).
AFTER_UI_ENTER = """
_G.acp_ui_entered = false
vim.api.nvim_create_autocmd("UIEnter", { once = true, callback = function()
  vim.schedule(function() vim.schedule(function() _G.acp_ui_entered = true end) end)
end })
"""


@contextlib.contextmanager
def ui_attached(nvim: Nvim) -> Iterator[None]:
    """A UI attached to the test's Neovim, as a terminal or a GUI attaches; entered once Neovim has run the
    UIEnter autocommands and what they scheduled."""
    nvim.lua(AFTER_UI_ENTER)
    nvim.api.ui_attach(80, 24, rgb=True)
    try:
        nvim.wait("_G.acp_ui_entered")
        yield
    finally:
        nvim.api.ui_detach()


def test_prestart_auto_starts_the_host_once_a_ui_attaches(nvim: Nvim) -> None:
    """The default ("auto"): a headless Neovim has no host until a UI attaches; then it starts unasked, and
    the first :AcpStart uses it."""
    assert nvim.lua("return require('acp_nvim.config').options.prestart_host") == "auto"
    assert nvim.lua("return require('acp_nvim.host').info()") is None
    with ui_attached(nvim):
        assert_first_start_uses_the_prestarted_host(nvim)
    assert not nvim.errors()


def test_prestart_auto_with_a_ui_already_attached(nvim: Nvim, tmp_path: Path) -> None:
    """setup() run after the UI attached (a plugin loaded late) starts the host at once."""
    assert configure(nvim, tmp_path, prestart_host=False)
    with ui_attached(nvim):
        assert nvim.lua("return require('acp_nvim.host').info()") is None
        assert configure(nvim, tmp_path)
        nvim.wait("require('acp_nvim.host').is_ready()")
    assert not nvim.errors()


def test_prestart_false_cancels_a_pending_auto(nvim: Nvim, tmp_path: Path) -> None:
    """The fixture's setup() left "auto" waiting for a UI; setup() again with false withdraws it."""
    assert configure(nvim, tmp_path, prestart_host=False)
    with ui_attached(nvim):
        assert nvim.lua("return require('acp_nvim.host').info()") is None
    # Typing a command still starts it early.
    assert nvim.lua("return require('acp_nvim.host.warmup').enabled()")


def test_prestart_auto_that_cannot_start_is_reported_by_the_command(nvim: Nvim, tmp_path: Path) -> None:
    """A host that cannot start in the background says nothing then; the command that needs it says why."""
    assert configure(nvim, tmp_path, python=str(tmp_path / "no-such-python"))
    with ui_attached(nvim):
        assert nvim.lua("return require('acp_nvim.host').info()") is None
        assert not nvim.notes()
        nvim.api.command("AcpStart")
        nvim.wait("#acp_test.notes > 0")
    assert "Python not found" in nvim.errors()[-1]


def test_prestart_host_rejects_other_values(nvim: Nvim, tmp_path: Path) -> None:
    assert configure(nvim, tmp_path, prestart_host="yes") is False
    (message,) = nvim.errors()
    assert '`prestart_host` must be one of "auto", true, false, got "yes"' in message


def test_build_step_creates_the_private_environment(bare_nvim: Nvim) -> None:
    calls = bare_nvim.lua(
        """
        local calls = {}
        local system = vim.system
        vim.system = function(argv)
          table.insert(calls, argv)
          return { wait = function() return { code = 0, stdout = 'True\\n', stderr = '' } end }
        end
        local ok = require('acp_nvim.build').run({ python = '/usr/bin/python3' })
        vim.system = system
        return { ok = ok, calls = calls }
        """
    )
    assert calls["ok"] is True
    data = bare_nvim.lua("return vim.fn.stdpath('data')")
    venv = os.path.join(data, "acp_nvim", "venv")
    assert calls["calls"][0] == ["/usr/bin/python3", "-m", "venv", venv]
    install = calls["calls"][1]
    assert install[:4] == [os.path.join(venv, "bin", "python"), "-m", "pip", "install"]
    assert str(ROOT) not in install  # the plugin runs from its checkout, never from a stale copy
    assert {"pynvim==0.6.0", "msgspec==0.23.0", "anyio==4.16.0"} <= set(install)
