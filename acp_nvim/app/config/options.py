"""The user's options, declared once: their names, types, allowed values and defaults (the normalized
configuration). `setup()` stores the raw table in Lua; the host validates it here when it starts (or when
`setup()` is called again while it runs), names every bad field once, and hands Lua back what Lua draws with
(`LuaOptions`).

The few options Lua must read before any host exists (`python`, `prestart_host`, `log`) are Lua's alone,
declared and checked in `lua/acp_nvim/config.lua`; Lua leaves them out of what it sends here.

Adding an option: add a field (with its default and a comment for the help) to the right Struct below; the
checker (`app/config/check.py`) reads its type from the annotation.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from acp_nvim.app.editor.sandbox_rules import OutsidePolicy
from acp_nvim.app.mcp.tools import TOOL_NAMES
from acp_nvim.app.runs import McpServerConfig

# Annotation markers the checker understands beyond plain types (app/config/check.py).
KEY = "key"  # a non-empty string, or false: that key stays unmapped
SESSION_DEFAULTS = "config{}"  # option id -> string or boolean
MCP = "mcp[]"  # MCP servers, checked by `app/config/check.py`'s mcp rule
MCP_TOOLS = "mcp_tools[]"  # names of the Neovim MCP server's tools (`app/mcp/tools.py`'s TOOL_NAMES)

Key = Annotated[str | bool, KEY]


class ChatOptions(msgspec.Struct, kw_only=True, frozen=True):
    # Where :AcpChat opens the chat.
    position: Literal["right", "left", "bottom", "current"] = "right"
    # Columns of a "right"/"left" chat; lines of a "bottom" chat.
    width: float = 80
    height: float = 20
    # Lines of the prompt window under the chat.
    prompt_height: float = 5
    # Open the chat as soon as a session starts.
    open_on_start: bool = True
    # :AcpChat starts Insert mode in an empty prompt: the next keys typed are the prompt.
    start_insert: bool = True
    # Fold the agent's thoughts (zo opens one).
    fold_thoughts: bool = True
    # Lines of a running command's output shown under its tool call.
    terminal_lines: float = 8
    # Size (bytes) of the markdown block still being streamed (a paragraph, a code block) past which it is
    # highlighted again only when its message pauses, not on every frame.
    highlight_max_bytes: float = 16 * 1024
    # Length (bytes) of a line past which the chat's windows turn 'linebreak' and 'breakindent' off: with
    # 'linebreak', Neovim measures such a line cell by cell on every redraw.
    long_line_bytes: float = 32 * 1024


class CapabilityOptions(msgspec.Struct, kw_only=True, frozen=True):
    # What the agent may do through Neovim. A capability turned off is not advertised to the agent.
    fs_read: bool = True
    fs_write: bool = True
    terminal: bool = True


class FsOptions(msgspec.Struct, kw_only=True, frozen=True):
    # Largest file (bytes) the agent may read.
    max_read_bytes: float = 10 * 1024 * 1024
    # Largest file (bytes) an agent's write loads into a hidden buffer when no buffer holds it (that buffer is
    # what :AcpReview reviews); a larger write goes straight to disk.
    max_buffer_bytes: float = 4 * 1024 * 1024
    # Run BufWritePre/BufWritePost autocommands (formatters) on the agent's writes.
    autocmds: bool = False


class SandboxOptions(msgspec.Struct, kw_only=True, frozen=True):
    # Paths outside the session's cwd: "ask" (vim.ui.select), "deny" or "allow"; `allow` / `deny` are paths
    # (a folder covers everything under it) that override this.
    outside: OutsidePolicy = "ask"
    allow: list[str] = []
    deny: list[str] = []


class SessionOptions(msgspec.Struct, kw_only=True, frozen=True):
    # :AcpSessions opens a stored session with session/resume (no history) even when it could load it.
    prefer_resume: bool = False


class AuthOptions(msgspec.Struct, kw_only=True, frozen=True):
    # Offer the agents' terminal login methods (advertises auth.terminal).
    terminal: bool = True


class PromptKeymaps(msgspec.Struct, kw_only=True, frozen=True):
    # Prompt window: send in normal mode / in insert mode, cancel the turn, walk the prompt history.
    send: str = "<CR>"
    send_insert: str = "<C-s>"
    # Prompt window (normal and insert mode): send the prompt into the agent's running turn (steering), where
    # the agent takes it; else it is queued like any prompt sent while the agent works.
    steer: str = "<M-CR>"
    cancel: str = "<C-c>"
    history_prev: str = "<Up>"
    history_next: str = "<Down>"
    # The chat: on the note where a long message is cut, opens the whole message.
    open_message: str = "<CR>"
    # Chat: on a prompt's header, offer to restore the files to before that prompt (or show the diff).
    checkpoint: Key = "<leader>ac"
    # Chat: fork the chat's session into a new chat (where the agent offers session/fork; the whole session:
    # the protocol forks no part of one).
    fork: Key = "<leader>af"


class ReviewKeymaps(msgspec.Struct, kw_only=True, frozen=True):
    # Buffer-local mappings while a buffer has agent hunks (:AcpReview); false leaves that key unmapped.
    next_hunk: Key = "]h"
    prev_hunk: Key = "[h"
    accept_hunk: Key = "<leader>aa"
    reject_hunk: Key = "<leader>ar"
    accept_file: Key = "<leader>aA"
    reject_file: Key = "<leader>aR"
    # Comment on the hunk under the cursor (or the lines selected, in Visual mode); on a comment: edit it.
    comment: Key = "<leader>am"


class ReviewOptions(msgspec.Struct, kw_only=True, frozen=True):
    keymaps: ReviewKeymaps = ReviewKeymaps()


class ConflictKeymaps(msgspec.Struct, kw_only=True, frozen=True):
    # Buffer-local mappings while a buffer has merge conflicts (:AcpConflict); false leaves that key unmapped.
    next: Key = "]x"
    prev: Key = "[x"


class ConflictOptions(msgspec.Struct, kw_only=True, frozen=True):
    keymaps: ConflictKeymaps = ConflictKeymaps()


class CheckpointOptions(msgspec.Struct, kw_only=True, frozen=True):
    # Every prompt is a checkpoint of the session's folders on disk (:AcpCheckpoint); false: none is taken.
    enabled: bool = True
    # Checkpoints older than this (days) are pruned, and a session's oldest past max_count.
    max_age_days: float = 7
    max_count: float = 100
    # Files larger than this (bytes) are left out of checkpoints (a restore names them).
    max_file_bytes: float = 8 * 1024 * 1024


class RegistrySettings(msgspec.Struct, kw_only=True, frozen=True):
    # The ACP Registry (issue 16): its agents are started by id with :AcpStart {id}. Where the list comes
    # from: https://, a loopback http://, a file:// URL or a local path (any other URL is refused when the
    # list is fetched).
    url: str = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json"
    # Seconds after which the cached list (stdpath("cache")/acp_nvim/registry.json) is fetched again.
    max_age: float = 24 * 60 * 60
    # false: no registry agents (nothing is fetched).
    enabled: bool = True
    # Registry agents (ids) that run their preview channel, an entry's unstable release, when it has one
    # newer than its stable version: { "codex-acp" }. The others run their stable version.
    preview: list[str] = []


class AttentionOptions(msgspec.Struct, kw_only=True, frozen=True):
    # How a turn's end, a permission or form waiting, or an agent's failure is told when its chat is in no
    # window of the current tab or Neovim is not focused: "off", "notify" (vim.notify), "osc9" / "osc777" (a
    # notification of the terminal Neovim runs in), "command" (runs `command`). The `User` events fire always.
    notify: Literal["off", "notify", "osc9", "osc777", "command"] = "off"
    # What "command" runs, without a shell, the message appended as its last argument: {"notify-send", "ACP"}.
    command: list[str] = []


class AgentOptions(msgspec.Struct, kw_only=True, frozen=True):
    """One entry of `opts.agents`: what the user set (None: the preset's, if any)."""

    cmd: str | None = None
    args: list[str] | None = None
    env: dict[str, str] | None = None
    install_hint: str | None = None
    # Defaults applied to every new session: a mode id, and config option id -> value.
    mode: str | None = None
    config: Annotated[dict[str, str | bool], SESSION_DEFAULTS] | None = None


class McpOptions(msgspec.Struct, kw_only=True, frozen=True):
    # Offer every session the Neovim MCP server `neovim` (`python -m acp_nvim mcp`): read-only tools on this
    # Neovim's diagnostics, language servers, open buffers and selection, inside the session's folders.
    enabled: bool = True
    # The tools it serves.
    tools: Annotated[list[str], MCP_TOOLS] = msgspec.field(default_factory=lambda: list(TOOL_NAMES))
    # The user's own MCP servers, added to every session: stdio ({name, command, args, env}) or {type =
    # "http" | "sse", name, url, headers} (sent only to agents that advertise that transport).
    servers: Annotated[list[McpServerConfig], MCP] = []


class Config(msgspec.Struct, kw_only=True, frozen=True):
    """Every option the host owns, with its default."""

    # Agent that :AcpStart starts when no name is given; None: :AcpStart asks (vim.ui.select) among the
    # configured agents and the ACP Registry's.
    default_agent: str | None = None
    # The user's agents, merged over the presets (app/config/presets.py); false disables a preset.
    agents: dict[str, AgentOptions | bool] = {}
    # Seconds the agent has to answer `initialize`.
    handshake_timeout: float = 30
    chat: ChatOptions = ChatOptions()
    capabilities: CapabilityOptions = CapabilityOptions()
    fs: FsOptions = FsOptions()
    sandbox: SandboxOptions = SandboxOptions()
    # Show the file the agent reads or writes in the last non-chat window.
    follow: bool = False
    # MCP servers every session gets: stdio ({name, command, args, env}) or {type = "http" | "sse", name, url,
    # headers} (only to agents that support it). The same as `mcp.servers`, kept for the configurations that
    # set it; both lists are offered.
    mcp_servers: Annotated[list[McpServerConfig], MCP] = []
    mcp: McpOptions = McpOptions()
    # Directories besides the cwd sessions may use (sent only to agents that support it).
    additional_directories: list[str] = []
    sessions: SessionOptions = SessionOptions()
    auth: AuthOptions = AuthOptions()
    keymaps: PromptKeymaps = PromptKeymaps()
    review: ReviewOptions = ReviewOptions()
    conflict: ConflictOptions = ConflictOptions()
    registry: RegistrySettings = RegistrySettings()
    checkpoints: CheckpointOptions = CheckpointOptions()
    attention: AttentionOptions = AttentionOptions()


class LuaOptions(msgspec.Struct, kw_only=True, frozen=True):
    """What Lua draws with, handed to it after each validation (`configured` of lua/acp_nvim/config.lua):
    the chat's and prompt's sizes and keymaps, the review and conflict keymaps, the agent names :AcpStart
    completes and the default one, how the user is told of what happens out of view (`attention`)."""

    chat: ChatOptions
    keymaps: PromptKeymaps
    review: ReviewOptions
    conflict: ConflictOptions
    default_agent: str | None
    agent_names: list[str]
    attention: AttentionOptions
