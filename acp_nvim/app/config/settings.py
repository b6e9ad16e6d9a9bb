"""The configuration in force: the last `setup()` table Lua sent, validated (`app/config/check.py`), and what
each part of the plugin is handed of it: Lua's drawing options, an agent's start, the health report.
"""

from __future__ import annotations

import msgspec

from acp_nvim.app.config import agent_routes, presets
from acp_nvim.app.config.check import check
from acp_nvim.app.config.options import Config, LuaOptions
from acp_nvim.app.registry.options import RegistryOptions
from acp_nvim.app.runs import AgentSpec
from acp_nvim.client.agent.command import OlderArgs

INVALID_OPTIONS = "invalid options (defaults used for these):\n"


class AgentReport(msgspec.Struct, kw_only=True, frozen=True):
    """An agent as :checkhealth shows and probes it."""

    name: str
    cmd: str
    args: list[str]
    env: dict[str, str]
    install_hint: str
    # The user's own (an `opts.agents` entry) or the default agent: health warns only for these; the other
    # presets are listed as available.
    configured: bool
    fallbacks: list[str]
    older_args: OlderArgs | None
    # By each command it may run (`cmd`, then each fallback): what it does and needs, when measured.
    routes: dict[str, agent_routes.CommandRoutes]


class McpReport(msgspec.Struct, kw_only=True, frozen=True):
    """The MCP servers every session is offered, as :checkhealth shows them."""

    # The Neovim MCP server: its tools, and the address it connects back to ("": none, not offered).
    enabled: bool
    tools: list[str]
    address: str
    # The user's own servers (`opts.mcp.servers`, `opts.mcp_servers`): "name (transport)".
    servers: list[str]


class ConfigReport(msgspec.Struct, kw_only=True, frozen=True):
    """What :checkhealth acp_nvim shows of the configuration."""

    errors: list[str]
    default_agent: str | None
    agents: list[AgentReport]
    mcp: McpReport | None = None


class Settings:
    def __init__(self) -> None:
        self.config = Config()
        self.errors: list[str] = []

    def apply(self, raw: object) -> str | None:
        """Takes a new `setup()` table; the message naming its bad fields, if any."""
        self.config, self.errors = check(raw)
        return self.message()

    def message(self) -> str | None:
        return INVALID_OPTIONS + "\n".join(self.errors) if self.errors else None

    def for_lua(self) -> LuaOptions:
        config = self.config
        return LuaOptions(
            chat=config.chat,
            keymaps=config.keymaps,
            review=config.review,
            conflict=config.conflict,
            default_agent=config.default_agent,
            agent_names=presets.agent_names(config),
            attention=config.attention,
        )

    def agent_spec(
        self, name: str | None, launch: presets.Launch, registry: RegistryOptions | None = None
    ) -> AgentSpec | str:
        return presets.agent_spec(self.config, name, launch, registry)

    def agent_names(self) -> list[str]:
        """The configured agents (presets and the user's), as :AcpStart's picker lists them."""
        return presets.agent_names(self.config)

    def registry(self, cache_dir: str, data_dir: str) -> RegistryOptions:
        """`opts.registry` with the plugin's folders of Neovim's stdpath("cache") and stdpath("data")."""
        registry = self.config.registry
        return RegistryOptions(
            url=registry.url,
            max_age=float(registry.max_age),
            enabled=registry.enabled,
            preview=list(registry.preview),
            cache_dir=cache_dir,
            data_dir=data_dir,
        )

    def report(self, launch: presets.Launch, path: str | None = None) -> ConfigReport:
        """Every agent as a start would run it; its routes in the row of the version installed on `path`
        (Neovim's PATH: the host's may be older)."""
        agents = []
        for name in presets.agent_names(self.config):
            spec = self.agent_spec(name, launch)
            if isinstance(spec, AgentSpec):
                agents.append(
                    AgentReport(
                        name=name,
                        cmd=spec.cmd,
                        args=spec.args,
                        env=spec.env,
                        install_hint=spec.install_hint,
                        configured=name in self.config.agents or name == self.config.default_agent,
                        fallbacks=spec.fallbacks,
                        older_args=spec.older_args,
                        routes={
                            cmd: routes
                            for cmd in (spec.cmd, *spec.fallbacks)
                            if (routes := agent_routes.of_command(cmd, path=path)) is not None
                        },
                    )
                )
        mcp = McpReport(
            enabled=self.config.mcp.enabled,
            tools=list(self.config.mcp.tools),
            address=launch.neovim,
            servers=[
                f"{one.name} ({one.type})" for one in [*self.config.mcp_servers, *self.config.mcp.servers]
            ],
        )
        default = self.config.default_agent
        return ConfigReport(errors=self.errors, default_agent=default, agents=agents, mcp=mcp)


def lua_defaults_json() -> str:
    """What `lua/acp_nvim/config.lua` draws with before a host has answered
    (`acp_nvim/app/config/lua_defaults.json`, written by tools/gen_lua_defaults.py): the defaults, as the host
    would hand them over."""
    import json

    return json.dumps(msgspec.to_builtins(Settings().for_lua()), indent=2, sort_keys=True) + "\n"
