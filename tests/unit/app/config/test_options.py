"""The configuration's one owner: a `setup()` table validated field by field (every bad one named, left at
its default), an agent's name resolved to its start, and the defaults Lua draws with before a host answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_nvim.app.config.check import check
from acp_nvim.app.config.editor_options import EditorOptions
from acp_nvim.app.config.options import ChatOptions, Config, RegistrySettings
from acp_nvim.app.config.presets import NO_AGENT_NAMED, PRESETS, Launch
from acp_nvim.app.config.settings import INVALID_OPTIONS, Settings, lua_defaults_json
from acp_nvim.app.runs import AgentSpec

from ..fakes import App

ROOT = Path(__file__).resolve().parents[4]
LAUNCH = Launch(cwd="/work/project", interpreter="/venv/bin/python", pythonpath="/plugin")


def test_every_bad_field_is_named_and_left_at_its_default() -> None:
    config, errors = check(
        {
            "chat": {"width": "wide", "colour": 1, "height": 30},
            "agents": {"x": {"cmd": 3}, "y": {}, "z": {"cmd": "z", "args": "-v"}, "ok": {"cmd": "ok"}},
            "bogus": True,
            "sandbox": {"outside": "maybe"},
            "review": {"keymaps": {"accept_hunk": 3, "next_hunk": "", "prev_hunk": False, "nope": 1}},
            "mcp_servers": [{"name": "m", "type": "ws", "url": "u"}],
            "fs": [1, 2],
        }
    )
    assert errors == [
        "`agents.x.cmd` must be a string, got number",
        "`agents.y.cmd` is required",
        "`agents.z.args` must be a list of strings, got string",
        "`chat.width` must be a number, got string",
        "`mcp_servers` must be a list of MCP servers ({name, command} or {type = 'http'|'sse', name, url}),"
        " got table",
        "`review.keymaps.accept_hunk` must be a key (a non-empty string) or false, got number",
        "`review.keymaps.next_hunk` must be a key (a non-empty string) or false, got string",
        '`sandbox.outside` must be one of "ask", "deny", "allow", got "maybe"',
        "unknown option `bogus`",
        "unknown option `chat.colour`",
        "unknown option `fs.1`",
        "unknown option `fs.2`",
        "unknown option `review.keymaps.nope`",
    ]
    # What was valid is kept, beside the defaults of what was not.
    assert config.chat == ChatOptions(height=30)
    assert config.review.keymaps.prev_hunk is False and config.review.keymaps.accept_hunk == "<leader>aa"
    assert set(config.agents) == {"ok"}
    assert config.sandbox.outside == "ask" and config.mcp_servers == []


def test_empty_lua_tables_arrive_as_lists_and_are_tables() -> None:
    config, errors = check([])
    assert (config, errors) == (Config(), [])
    config, errors = check(
        {
            "agents": {"claude": [], "gemini": False},
            "mcp_servers": [{"name": "m", "command": "/bin/m", "env": []}],
            "sandbox": {"allow": []},
        }
    )
    assert errors == []
    assert config.agents["gemini"] is False
    assert config.mcp_servers[0].env == {} and config.mcp_servers[0].command == "/bin/m"


def test_a_table_that_is_no_table_is_refused() -> None:
    assert check("yes")[1] == ["setup() takes a table, got string"]
    assert check({"agents": ["x"], "chat": 1})[1] == [
        "`agents.1`: agent names must be strings",
        "`chat` must be a table, got number",
    ]


def test_a_preset_with_the_users_own_command_line_runs_it_as_written() -> None:
    settings = Settings()
    assert settings.apply({"agents": {"gemini": {"env": {"A": "1"}}, "claude": {"args": ["--x"]}}}) is None
    gemini = settings.agent_spec("gemini", LAUNCH)
    assert isinstance(gemini, AgentSpec)
    assert (gemini.cmd, gemini.args, gemini.env) == ("gemini", ["--acp"], {"A": "1"})
    assert gemini.older_args == PRESETS["gemini"].older_args
    claude = settings.agent_spec("claude", LAUNCH)
    assert isinstance(claude, AgentSpec)
    assert (claude.cmd, claude.args, claude.fallbacks) == ("claude-agent-acp", ["--x"], [])


def test_the_demo_agent_runs_on_the_hosts_interpreter() -> None:
    spec = Settings().agent_spec("demo", LAUNCH)
    assert isinstance(spec, AgentSpec)
    assert spec.cmd == "/venv/bin/python" and spec.env == {"PYTHONPATH": "/plugin"}


def test_an_unknown_or_disabled_agent_says_which_exist() -> None:
    settings = Settings()
    settings.apply({"agents": {"codex": False, "mine": {"cmd": "mine"}}, "default_agent": "nope"})
    refused = settings.agent_spec(None, LAUNCH)
    assert isinstance(refused, str) and refused.startswith('unknown agent "nope" (known: auggie, claude,')
    assert "mine" in refused and "codex" not in refused
    assert settings.agent_spec("codex", LAUNCH) == refused.replace('"nope"', '"codex"')


def test_session_options_and_paths_are_made_absolute_against_neovims_cwd(tmp_path: Path) -> None:
    settings = Settings()
    settings.apply(
        {
            "additional_directories": ["../common", "/abs/"],
            "sandbox": {"allow": ["~/notes"], "deny": ["secret"]},
            "sessions": {"prefer_resume": True},
            "auth": {"terminal": False},
            "handshake_timeout": 5,
        }
    )
    spec = settings.agent_spec("claude", LAUNCH)
    assert isinstance(spec, AgentSpec)
    assert spec.additional_directories == ["/work/common", "/abs"]
    assert (spec.prefer_resume, spec.terminal_auth, spec.handshake_timeout) == (True, False, 5.0)
    options = EditorOptions.for_start(settings.config, "/work/project")
    assert options.allow == [str(Path("~/notes").expanduser())] and options.deny == ["/work/project/secret"]
    assert options.fs_read and options.max_read_bytes == 10 * 1024 * 1024


def test_the_message_names_the_fields_once_sorted() -> None:
    settings = Settings()
    message = settings.apply({"zeta": 1, "alpha": 2})
    assert message == INVALID_OPTIONS + "unknown option `alpha`\nunknown option `zeta`"


def test_lua_draws_with_the_current_defaults_before_a_host_answers() -> None:
    committed = (ROOT / "acp_nvim" / "app" / "config" / "lua_defaults.json").read_text(encoding="utf-8")
    assert committed == lua_defaults_json(), "stale: run .venv/bin/python tools/gen_lua_defaults.py"


@pytest.mark.anyio
async def test_a_start_the_configuration_cannot_make_is_an_error_of_that_agent() -> None:
    app = App()
    app.status.refuse("nosuch", 'unknown agent "nosuch" (known: a)')
    assert app.port.notes[-1] == ('unknown agent "nosuch" (known: a)', 4)
    shown = app.port.statuses[-1]
    assert (shown.state, shown.agent_name, shown.error) == (
        "error",
        "nosuch",
        'unknown agent "nosuch" (known: a)',
    )


def test_the_registry_options_are_checked_like_any_other() -> None:
    config, errors = check({"registry": {"url": 3, "max_age": "soon", "enable": True}})
    assert errors == [
        "`registry.max_age` must be a number, got string",
        "`registry.url` must be a string, got number",
        "unknown option `registry.enable`",
    ]
    assert config.registry == RegistrySettings() and config.default_agent is None
    config, errors = check({"registry": {"url": "file:///team.json", "max_age": 60}, "default_agent": 1})
    assert errors == ["`default_agent` must be a string, got number"]
    assert (config.registry.url, config.registry.max_age, config.registry.enabled) == (
        "file:///team.json",
        60,
        True,
    )


def test_the_preview_channel_is_chosen_per_registry_agent() -> None:
    config, errors = check({"registry": {"preview": ["codex-acp", "gemini"]}})
    assert errors == [] and config.registry.preview == ["codex-acp", "gemini"]
    config, errors = check({"registry": {"preview": ["codex-acp", "../x", "Bad Id"]}})
    assert errors == [
        "`registry.preview` must list registry agent ids (lowercase letters, digits and '-'), got"
        ' "../x", "Bad Id"'
    ]
    assert config.registry.preview == ["codex-acp"]
    config, errors = check({"registry": {"preview": "codex-acp"}})
    assert errors == ["`registry.preview` must be a list of strings, got string"]
    assert config.registry.preview == []


def test_a_name_is_the_users_agent_a_preset_or_the_registrys() -> None:
    """The user's entry wins; a preset carries the registry (the host runs the registry's agent of its name
    when its command is not installed); any other name is the registry's; a disabled preset stays unknown."""
    settings = Settings()
    settings.apply({"agents": {"mine": {"cmd": "mine"}, "gemini": {"args": ["--acp"]}, "codex": False}})
    registry = settings.registry("/cache/acp_nvim", "/data/acp_nvim")
    assert registry.enabled and str(registry.agents_dir) == "/data/acp_nvim/agents"
    specs = {
        name: settings.agent_spec(name, LAUNCH, registry) for name in ("mine", "gemini", "goose", "tiny")
    }
    assert all(isinstance(spec, AgentSpec) for spec in specs.values())
    assert {name: spec.registry for name, spec in specs.items() if isinstance(spec, AgentSpec)} == {
        "mine": None,
        "gemini": None,
        "goose": registry,
        "tiny": registry,
    }
    tiny = specs["tiny"]
    assert isinstance(tiny, AgentSpec) and (tiny.name, tiny.cmd, tiny.cwd) == ("tiny", "", LAUNCH.cwd)
    assert settings.agent_spec("codex", LAUNCH, registry) == settings.agent_spec("codex", LAUNCH)
    assert settings.agent_spec(None, LAUNCH, registry) == NO_AGENT_NAMED
    settings.apply({"registry": {"enabled": False}})
    off = settings.registry("/cache/acp_nvim", "/data/acp_nvim")
    refused = settings.agent_spec("tiny", LAUNCH, off)
    assert isinstance(refused, str) and refused.startswith('unknown agent "tiny" (known: ')
    goose = settings.agent_spec("goose", LAUNCH, off)
    assert isinstance(goose, AgentSpec) and goose.registry is None


def test_the_attention_option_is_checked_like_any_other() -> None:
    config, errors = check({"attention": {"notify": "command", "command": ["notify-send", "ACP"]}})
    assert errors == [] and config.attention.command == ["notify-send", "ACP"]
    _, errors = check({"attention": {"notify": "bell", "command": "notify-send"}})
    assert errors == [
        "`attention.command` must be a list of strings, got string",
        '`attention.notify` must be one of "off", "notify", "osc9", "osc777", "command", got "bell"',
    ]
    # "command" with nothing to run: named, and nothing is run.
    config, errors = check({"attention": {"notify": "command"}})
    assert errors == ['`attention.command` must name the program to run when `attention.notify` is "command"']
    assert config.attention.notify == "off"
