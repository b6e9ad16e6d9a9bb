"""The known ACP agents, and an agent's name resolved to what starts it: its preset with the user's
`opts.agents[name]` over it, and the options of the sessions it opens (`AgentSpec`).

With the ACP Registry (`registry`): the user's `opts.agents` entry wins; a preset carries the registry too,
so that one whose command is not installed starts the registry's agent of its name; any other name is the
registry's agent of that id. Which command a registry agent runs is decided when it starts
(`app/registry/agents.py`): the list may have to be fetched, a binary installed.

Each preset can be overridden (or disabled with `false`) in `opts.agents`. The host picks among `fallbacks`
and `older_args` when it starts one (`acp_nvim/client/agent/command.py`).
"""

from __future__ import annotations

import os

import msgspec

from acp_nvim.app.config import options as c
from acp_nvim.app.mcp import offer
from acp_nvim.app.registry.options import RegistryOptions
from acp_nvim.app.runs import AgentSpec
from acp_nvim.client.agent.command import OlderArgs


class Preset(msgspec.Struct, kw_only=True, frozen=True):
    cmd: str
    args: list[str] = []
    # Shown when the command is not found.
    install_hint: str = ""
    # Older executables started when `cmd` is not installed.
    fallbacks: list[str] = []
    # `args` for versions older than `before` (read from the npm `package`'s package.json, else from
    # `cmd --version`).
    older_args: OlderArgs | None = None
    # It offers subagents (unstable child sessions): the client capability is advertised from its first start
    # (another agent gets it from the start after one whose answer offered them: app/agent_runs.py).
    subagents: bool = False


# What the user runs to make the private environment: a message, not a Lua call of the host's (written in two
# parts so that tests/unit/test_boundary.py, which finds those by their text, does not take it for one).
BUILD_STEP = ":lua require('acp_nvim.build')" + ".run()"

# The offline demo agent shipped with the plugin: its `cmd` is the host's own interpreter.
DEMO = "demo"

PRESETS: dict[str, Preset] = {
    "claude": Preset(
        cmd="claude-agent-acp",
        # The agent's name until its 0.18 (npm @zed-industries/claude-code-acp), still installed by many.
        fallbacks=["claude-code-acp"],
        install_hint="npm install -g @agentclientprotocol/claude-agent-acp",
    ),
    "gemini": Preset(
        cmd="gemini",
        args=["--acp"],
        # `--acp` is new in 0.33.0; later versions call `--experimental-acp` deprecated.
        older_args=OlderArgs(before="0.33.0", args=["--experimental-acp"], package="@google/gemini-cli"),
        install_hint="npm install -g @google/gemini-cli",
    ),
    "copilot": Preset(cmd="copilot", args=["--acp"], install_hint="npm install -g @github/copilot"),
    "auggie": Preset(cmd="auggie", args=["--acp"], install_hint="npm install -g @augmentcode/auggie"),
    "cline": Preset(cmd="cline", args=["--acp"], install_hint="npm install -g cline"),
    "qwen": Preset(cmd="qwen", args=["--acp"], install_hint="npm install -g @qwen-code/qwen-code"),
    "codex": Preset(
        cmd="codex-acp", install_hint="npm install -g @agentclientprotocol/codex-acp", subagents=True
    ),
    "goose": Preset(
        cmd="goose",
        args=["acp"],
        install_hint="see https://block.github.io/goose/docs/getting-started/installation",
    ),
    "opencode": Preset(cmd="opencode", args=["acp"], install_hint="npm install -g opencode-ai"),
    "fast-agent": Preset(cmd="fast-agent-acp", install_hint="uv tool install fast-agent-mcp"),
    DEMO: Preset(
        cmd="",
        args=["-m", "acp_nvim.agents.demo"],
        install_hint=f"it ships with acp.nvim: run the build step ({BUILD_STEP})",
    ),
}


def agent_names(config: c.Config) -> list[str]:
    """Every agent name: presets and the user's, minus the disabled ones."""
    names = {name for name in PRESETS if config.agents.get(name) is not False}
    names |= {name for name, agent in config.agents.items() if agent is not False}
    return sorted(names)


class Launch(msgspec.Struct, kw_only=True, frozen=True):
    """What the host starts an agent with besides the configuration: Neovim's cwd of the moment, and the
    interpreter and module path of the plugin (for the demo agent)."""

    cwd: str
    interpreter: str
    pythonpath: str
    # Open a session as soon as the agent is up (false: :AcpSessions starts an agent only to list).
    session: bool = True
    # Neovim's v:servername, where the Neovim MCP server connects back ("": not offered).
    neovim: str = ""


def absolute(path: str, cwd: str) -> str:
    """`~` and `$VAR` expanded, relative paths made absolute against `cwd` (as `:p` does in Neovim)."""
    return os.path.normpath(os.path.join(cwd, os.path.expandvars(os.path.expanduser(path))))


NO_AGENT_NAMED = "no agent: start one with :AcpStart (or set opts.default_agent)"


def agent_spec(
    config: c.Config, name: str | None, launch: Launch, registry: RegistryOptions | None = None
) -> AgentSpec | str:
    """The agent `name` (the default one when None) ready to start, or why there is none. `registry`: the
    ACP Registry this start may use (None, or disabled: only the configured agents)."""
    name = name or config.default_agent
    if name is None:
        return NO_AGENT_NAMED
    user = config.agents.get(name)
    preset = PRESETS.get(name)
    registry = registry if registry is not None and registry.enabled else None
    if user is False or user is True or (user is None and preset is None and registry is None):
        known = ", ".join(agent_names(config))
        return f'unknown agent "{name}" (known: {known})'
    base = preset or Preset(cmd="")
    own_command = user is not None and (user.cmd is not None or user.args is not None)
    cmd = user.cmd if user is not None and user.cmd is not None else base.cmd
    env = dict(user.env or {}) if user is not None else {}
    if name == DEMO and cmd == "":
        cmd = launch.interpreter
        # The demo agent is part of this plugin: importable from the source tree too.
        env.setdefault("PYTHONPATH", launch.pythonpath)
    return AgentSpec(
        name=name,
        cmd=cmd,
        args=list(user.args if user is not None and user.args is not None else base.args),
        env=env,
        cwd=launch.cwd,
        install_hint=(user.install_hint if user is not None else None) or base.install_hint,
        # The user's own command line is run as written.
        fallbacks=[] if own_command else list(base.fallbacks),
        older_args=None if own_command else base.older_args,
        handshake_timeout=float(config.handshake_timeout),
        mode=user.mode if user is not None else None,
        config=dict(user.config or {}) if user is not None else {},
        mcp_servers=[*config.mcp_servers, *config.mcp.servers],
        neovim_mcp=offer.neovim_mcp(config.mcp.enabled, config.mcp.tools, launch.interpreter, launch.neovim),
        additional_directories=[absolute(d, launch.cwd) for d in config.additional_directories],
        prefer_resume=config.sessions.prefer_resume,
        terminal_auth=config.auth.terminal,
        session=launch.session,
        subagents=base.subagents,
        # The user's own agent of that name wins over the registry's.
        registry=registry if user is None else None,
    )
