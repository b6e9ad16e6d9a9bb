"""Every Lua entry point the host calls, declared once: the Python half of the Python<->Lua boundary.

Each method runs one function of `lua/acp_nvim/` through the bridge; its Lua code is written here and nowhere
else in the package (`tests/unit/test_boundary.py` checks that, and that each function exists in Lua). What
crosses is typed where the shape is fixed (the spec of `terminal.create`); the conversion to the plain tables
pynvim sends happens here. `files.py` still passes the `fs.read`/`fs.write` code and options itself. The other
direction, Lua calling the host, is declared in `lua/acp_nvim/host_api.lua`.

Questions (pickers, permission and sandbox prompts, forms) are asked through `Ui.ask`, which prepends the
answer's token: for them this module declares the code the `Ui` runs (the `ASK_*` constants).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import msgspec

from acp_nvim.client.agent_edits import FileEdit

# ---- the Lua code of each entry point ---------------------------------------------------------------

CHAT_CREATE = "require('acp_nvim.chat').create(...)"
CHAT_RESET = "require('acp_nvim.chat').reset(...)"
CHAT_DESTROY = "require('acp_nvim.chat').destroy(...)"
CHAT_OPEN = "require('acp_nvim.chat').open(...)"
CHAT_APPLY = "require('acp_nvim.chat').apply_json(...)"
STATUS_SET = "require('acp_nvim.status').set(...)"
NOTIFY = "vim.notify(...)"
PROMPT_REFUSED = "require('acp_nvim.prompt').refused(...)"
REAPER_ADD = "require('acp_nvim.reaper').add(...)"
REAPER_REMOVE = "require('acp_nvim.reaper').remove(...)"
HOST_BOOTSTRAPPED = "require('acp_nvim.host').bootstrapped(...)"
BATCH = "require('acp_nvim.batch').run(...)"
ELICITATION_CLOSE = "require('acp_nvim.elicitation').close(...)"

FS_READ = "return require('acp_nvim.fs').read(...)"
FS_WRITE_FOR_HOST = "require('acp_nvim.fs').write_for_host(...)"
FS_FIND_BUFFER = "return require('acp_nvim.fs').find_buffer(...)"
FS_FILE_WRITTEN = "require('acp_nvim.fs').file_written(...)"
FOLLOW_SHOW = "require('acp_nvim.follow').show(...)"
FOLLOW_DISK_APPLY = "require('acp_nvim.fs.follow_disk').apply(...)"
FOLLOW_DISK_WATCH = "require('acp_nvim.fs.disk_watch').watch(...)"
FOLLOW_DISK_UNWATCH = "require('acp_nvim.fs.disk_watch').unwatch(...)"

TERMINAL_CREATE = "return require('acp_nvim.terminal').create(...)"
TERMINAL_OUTPUT = "return require('acp_nvim.terminal').output(...)"
TERMINAL_KILL = "return require('acp_nvim.terminal').kill(...)"
# Fire and forget: kill() signals the process group and keeps the terminal readable (the chat still shows it).
TERMINAL_KILL_MANY = "for _, id in ipairs(...) do require('acp_nvim.terminal').kill(id) end"
TERMINAL_RELEASE = "return require('acp_nvim.terminal').release(...)"
# Answers at once when the command already ended, else later through `acp_reply` with the token.
TERMINAL_WAIT_FOR_EXIT = """
local id, token = ...
return require('acp_nvim.terminal').wait_for_exit(id, function(_, status)
  require('acp_nvim.ui').answer(token, status)
end)
"""

# Run by `Ui.ask(code, ...)`, which passes the answer's token first.
ASK_SELECT = "require('acp_nvim.ui').select(...)"
ASK_TERMINAL = "require('acp_nvim.ui').terminal(...)"
ASK_PERMISSION = "require('acp_nvim.permission').ask(...)"
ASK_SANDBOX = "require('acp_nvim.sandbox_prompt').ask(...)"
ASK_ELICITATION = "require('acp_nvim.elicitation').ask(...)"


# ---- what crosses ---------------------------------------------------------------------------------


class AgentIdentity(msgspec.Struct, frozen=True):
    """Who the agent says it is (`initialize`), or only its configured name before it answered."""

    name: str
    title: str | None = None
    version: str | None = None


class UsageCost(msgspec.Struct, frozen=True):
    amount: float
    currency: str | None


class Usage(msgspec.Struct, frozen=True):
    """The context window's use, as the agent last reported it."""

    used: int
    size: int
    cost: UsageCost | None = None


class Status(msgspec.Struct, frozen=True, kw_only=True):
    """What `status.set` receives (`AcpStatus` in lua/acp_nvim/status.lua), which strips the None fields."""

    agent: AgentIdentity | None
    agent_name: str | None
    state: str
    session_id: str | None
    mode: str | None
    model: str | None
    title: str | None
    usage: Usage | None
    sessions: int
    auth_methods: list[str]
    protocol_version: int | None
    error: str | None


class ChatInfo(msgspec.Struct, frozen=True):
    """What `chat.create` and `chat.reset` show of a session's agent."""

    agent: str
    display_name: str
    cwd: str


class PickerItem(msgspec.Struct, frozen=True):
    id: str
    label: str


class SelectRequest(msgspec.Struct, frozen=True):
    """A `ui.select` picker: the chosen item's id comes back."""

    prompt: str
    kind: str
    items: list[PickerItem]


class LoginTerminalRequest(msgspec.Struct, frozen=True):
    """A `ui.terminal` command (a login): its exit code comes back."""

    title: str
    argv: list[str]
    env: dict[str, str]


class TerminalEnvVar(msgspec.Struct, frozen=True):
    name: str
    value: str


class TerminalSpec(msgspec.Struct, frozen=True):
    """What `terminal.create` runs: env is merged over the editor's environment by jobstart."""

    command: str
    args: list[str]
    env: list[TerminalEnvVar]
    cwd: str
    output_byte_limit: int | None


def to_lua(value: msgspec.Struct) -> dict[str, Any]:
    """A Struct as the table Lua receives; a None field arrives as vim.NIL, as a None in a dict always did."""
    table = msgspec.to_builtins(value)
    assert isinstance(table, dict)
    return table


# ---- the calls --------------------------------------------------------------------------------------


class BridgeLike(Protocol):
    """The part of `Bridge` these calls need (a test's fake may have only `lua`)."""

    def lua(self, code: str, *args: Any) -> None: ...

    def lua_later(self, key: str, code: str, *args: Any) -> None: ...

    async def lua_result(self, code: str, *args: Any) -> Any: ...


class NvimExec(Protocol):
    def exec_lua(self, code: str, *args: Any, **kwargs: Any) -> Any: ...


class LuaApi:
    """One method per Lua entry point; safe from any thread, as the bridge is."""

    def __init__(self, bridge: BridgeLike) -> None:
        self._bridge = bridge

    # chat (lua/acp_nvim/chat.lua)

    def chat_create(self, session_id: str, info: ChatInfo) -> None:
        self._bridge.lua(CHAT_CREATE, session_id, to_lua(info))

    def chat_reset(self, session_id: str, info: ChatInfo) -> None:
        self._bridge.lua(CHAT_RESET, session_id, to_lua(info))

    def chat_destroy(self, session_id: str) -> None:
        self._bridge.lua(CHAT_DESTROY, session_id)

    def chat_open(self, session_id: str) -> None:
        self._bridge.lua(CHAT_OPEN, session_id)

    def chat_apply(self, session_id: str, chunks: Sequence[bytes]) -> None:
        """View operations, each chunk a JSON array Lua decodes itself (cheaper than msgpack tables)."""
        self._bridge.lua(CHAT_APPLY, session_id, chunks)

    # status line, notifications

    def status_set(self, status: Status) -> None:
        # Within a frame, with the next call: a stream's status changes ride along with its chat updates.
        self._bridge.lua_later("status", STATUS_SET, to_lua(status))

    def notify(self, message: str, level: int, title: str = "acp.nvim") -> None:
        self._bridge.lua(NOTIFY, message, level, {"title": title})

    def prompt_refused(self, message: str, text: str, attachments: Any) -> None:
        """The prompt was not sent: Lua gives the text and attachments back to the user."""
        self._bridge.lua(PROMPT_REFUSED, message, text, attachments)

    def elicitation_close(self, token: int) -> None:
        self._bridge.lua(ELICITATION_CLOSE, token)

    # process groups (lua/acp_nvim/reaper.lua)

    def reaper_add(self, pgid: int, agent_name: str) -> None:
        self._bridge.lua(REAPER_ADD, pgid, agent_name)

    def reaper_remove(self, pgid: int) -> None:
        self._bridge.lua(REAPER_REMOVE, pgid)

    # files (lua/acp_nvim/fs.lua, follow.lua)

    def follow_show(self, path: str, line: int | None, bufnr: int | None) -> None:
        self._bridge.lua(FOLLOW_SHOW, path, line, bufnr)

    # the agent's own edits on disk (lua/acp_nvim/fs/follow_disk.lua): a `FollowSink` of client/agent_edits.py

    def follow_edits(self, session_id: str, tool_call_id: str | None, files: list[FileEdit]) -> None:
        # Built by hand: msgspec would turn the bytes into base64; pynvim sends them as a Lua string.
        tables = [{"path": f.path, "known": f.known, "absent": f.absent, "before": f.before} for f in files]
        self._bridge.lua(FOLLOW_DISK_APPLY, session_id, tool_call_id, tables)

    async def watch_disk(self, session_id: str, roots: list[str]) -> None:
        await self._bridge.lua_result(FOLLOW_DISK_WATCH, session_id, roots)

    def unwatch_disk(self, session_id: str) -> None:
        self._bridge.lua(FOLLOW_DISK_UNWATCH, session_id)

    def show_edited(self, path: str) -> None:
        """`follow = true`: the file the agent edited on disk, at its first hunk (once it is followed)."""
        self.follow_show(path, None, None)

    # terminals (lua/acp_nvim/terminal.lua)

    async def terminal_create(self, spec: TerminalSpec) -> Any:
        return await self._bridge.lua_result(TERMINAL_CREATE, to_lua(spec))

    async def terminal_output(self, terminal_id: str, known_total: int) -> Any:
        return await self._bridge.lua_result(TERMINAL_OUTPUT, terminal_id, known_total)

    async def terminal_wait_for_exit(self, terminal_id: str, token: int) -> Any:
        return await self._bridge.lua_result(TERMINAL_WAIT_FOR_EXIT, terminal_id, token)

    async def terminal_kill(self, terminal_id: str) -> Any:
        return await self._bridge.lua_result(TERMINAL_KILL, terminal_id)

    def terminal_kill_many(self, terminal_ids: Sequence[str]) -> None:
        self._bridge.lua(TERMINAL_KILL_MANY, list(terminal_ids))

    async def terminal_release(self, terminal_id: str) -> Any:
        return await self._bridge.lua_result(TERMINAL_RELEASE, terminal_id)


def host_bootstrapped(nvim: NvimExec, info: dict[str, Any]) -> None:
    """The host's answer to `acp_bootstrap`; sent on pynvim's thread before the bridge is up."""
    nvim.exec_lua(HOST_BOOTSTRAPPED, info, async_=True)
