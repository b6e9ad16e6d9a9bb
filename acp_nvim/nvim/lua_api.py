"""Every Lua entry point the host calls, declared once: the Python half of the Python<->Lua boundary.

Each method runs one function of `lua/acp_nvim/` through the bridge; its Lua code is written here and nowhere
else in the package (`tests/unit/test_boundary.py` checks that, and that each function exists in Lua). What
crosses is typed (`lua_values.py`): the options and specs sent as msgspec Structs, and the answers of `fs.*`
and `terminal.*` decoded into Structs. Those answers are facts (`ok = false` with a `fact` such as
"path_changed"); which error an agent gets for a fact is decided in Python (`app/editor/fs_rules.py`,
`terminal_rules.py`). The other direction, Lua calling the host, is declared in `lua/acp_nvim/host/api.lua`.

Questions (pickers, permission and sandbox prompts, forms) are asked through `Ui.ask`, which prepends the
answer's token: for them this module declares the code the `Ui` runs (the `ASK_*` constants).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    # What the application hands over to be shown (status, chat info, attention, the review's notes): declared
    # where it is decided. For annotations only: the MCP server imports this module for its chunks, and
    # starts faster without them.
    from acp_nvim.app.review.note import NoteItem, NoteMark
    from acp_nvim.app.views import Attention, ChatInfo, QueueView, Status
    from acp_nvim.client.files.agent_edits import FileEdit
from acp_nvim.nvim.lua_values import (
    FsReadAnswer,
    FsReadOptions,
    FsWriteAnswer,
    FsWriteOptions,
    LuaTable,
    LuaValue,
    TerminalCreated,
    TerminalDone,
    TerminalOutput,
    TerminalSpec,
    TerminalWait,
    from_lua,
    to_lua,
)

# ---- the Lua code of each entry point ---------------------------------------------------------------

CHAT_CREATE = "require('acp_nvim.ui.chat').create(...)"
CHAT_RESET = "require('acp_nvim.ui.chat').reset(...)"
CHAT_DESTROY = "require('acp_nvim.ui.chat').destroy(...)"
CHAT_OPEN = "require('acp_nvim.ui.chat').open(...)"
CHAT_APPLY = "require('acp_nvim.ui.chat').apply_json(...)"
CHAT_QUEUE = "require('acp_nvim.ui.chat_queue').show(...)"
STATUS_SET = "require('acp_nvim.ui.status').set(...)"
ATTENTION = "require('acp_nvim.ui.attention').fire(...)"
NOTIFY = "vim.notify(...)"
PROMPT_REFUSED = "require('acp_nvim.ui.prompt').refused(...)"
PROMPT_DRAFT = "require('acp_nvim.ui.prompt').draft(...)"
REVIEW_MARKS = "require('acp_nvim.editor.review.notes').show(...)"
REVIEW_DROP = "require('acp_nvim.editor.review.notes').drop(...)"
REVIEW_LIST = "require('acp_nvim.editor.review.notes').quickfix(...)"
REAPER_ADD = "require('acp_nvim.editor.agent_groups').add(...)"
REAPER_REMOVE = "require('acp_nvim.editor.agent_groups').remove(...)"
HOST_BOOTSTRAPPED = "require('acp_nvim.host').bootstrapped(...)"
CONFIG_CONFIGURED = "require('acp_nvim.config').configured(...)"
REAPER_LEAVING_NOTED = "require('acp_nvim.editor.agent_groups').leaving_noted()"
BATCH = "require('acp_nvim.host.batch').run(...)"
ELICITATION_CLOSE = "require('acp_nvim.ui.elicitation').close(...)"
AGENTS_CATALOG = "require('acp_nvim.ui.agents').catalog(...)"
START_AGENT = "require('acp_nvim').start(...)"

FS_READ = "return require('acp_nvim.editor.fs').read(...)"
FS_WRITE = "return require('acp_nvim.editor.fs').write(...)"

# What the MCP server (`python -m acp_nvim mcp`) runs over its own channel (`nvim/mcp_link.py`), not the
# host's.
MCP_DIAGNOSTICS = "return require('acp_nvim.editor.mcp').diagnostics(...)"
MCP_BUFFERS = "return require('acp_nvim.editor.mcp').buffers()"
MCP_SELECTION = "return require('acp_nvim.editor.mcp').selection()"
MCP_LSP = "return require('acp_nvim.editor.mcp').lsp(...)"
MCP_CANCEL = "require('acp_nvim.editor.mcp').cancel(...)"
FS_FIND_BUFFER = "return require('acp_nvim.editor.fs').find_buffer(...)"
FS_FILE_WRITTEN = "require('acp_nvim.editor.fs').file_written(...)"
FS_FORGET_VIEWS = "require('acp_nvim.editor.fs.view').forget(...)"
FOLLOW_SHOW = "require('acp_nvim.editor.follow').show(...)"
FOLLOW_DISK_APPLY = "require('acp_nvim.editor.fs.follow_disk').apply(...)"
FOLLOW_DISK_WATCH = "require('acp_nvim.editor.fs.disk_watch').watch(...)"
FOLLOW_DISK_UNWATCH = "require('acp_nvim.editor.fs.disk_watch').unwatch(...)"
CHECKPOINT = "return require('acp_nvim.editor.checkpoint').run(...)"

TERMINAL_CREATE = "return require('acp_nvim.editor.terminal').create(...)"
TERMINAL_OUTPUT = "return require('acp_nvim.editor.terminal').output(...)"
TERMINAL_KILL = "return require('acp_nvim.editor.terminal').kill(...)"
# Fire and forget: kill() signals the process group and keeps the terminal readable (the chat still shows it).
TERMINAL_KILL_MANY = "require('acp_nvim.editor.terminal').kill_many(...)"
TERMINAL_RELEASE = "return require('acp_nvim.editor.terminal').release(...)"
# Answers at once when the command already ended, else later through `acp_reply` with the token.
TERMINAL_WAIT_FOR_EXIT = """
local id, token = ...
return require('acp_nvim.editor.terminal').wait_for_exit(id, function(_, status)
  require('acp_nvim.ui.ask').answer(token, status)
end)
"""

# Run by `Ui.ask(code, ...)`, which passes the answer's token first.
ASK_SELECT = "require('acp_nvim.ui.ask').select(...)"
ASK_TERMINAL = "require('acp_nvim.ui.ask').terminal(...)"
ASK_INPUT = "require('acp_nvim.ui.ask').input(...)"
ASK_PERMISSION = "require('acp_nvim.ui.permission').ask(...)"
ASK_SANDBOX = "require('acp_nvim.ui.sandbox').ask(...)"
ASK_ELICITATION = "require('acp_nvim.ui.elicitation').ask(...)"


# ---- the calls --------------------------------------------------------------------------------------


class BridgeLike(Protocol):
    """The part of `Bridge` these calls need (a test's fake may have only `lua`)."""

    def lua(self, code: str, *args: LuaValue) -> None: ...

    def lua_later(self, key: str, code: str, *args: LuaValue) -> None: ...

    async def lua_result(self, code: str, *args: LuaValue) -> LuaValue: ...


class NvimExec(Protocol):
    def exec_lua(self, code: str, *args: LuaValue, async_: bool = False) -> LuaValue: ...


class LuaApi:
    """One method per Lua entry point; safe from any thread, as the bridge is."""

    def __init__(self, bridge: BridgeLike) -> None:
        self._bridge = bridge

    # chat (lua/acp_nvim/ui/chat/: init.lua is the facade)

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

    def chat_queue(self, session_id: str, view: QueueView) -> None:
        """The chat's queued prompts, under its last item."""
        self._bridge.lua(CHAT_QUEUE, session_id, to_lua(view))

    # status line, notifications

    def status_set(self, status: Status) -> None:
        # Within a frame, with the next call: a stream's status changes ride along with its chat updates.
        self._bridge.lua_later("status", STATUS_SET, to_lua(status))

    def attention(self, fact: Attention) -> None:
        # At once, after the calls waiting (the status): a handler of the event finds them shown.
        self._bridge.lua(ATTENTION, to_lua(fact))

    def notify(self, message: str, level: int, title: str = "acp.nvim") -> None:
        self._bridge.lua(NOTIFY, message, level, {"title": title})

    def prompt_refused(self, message: str, text: str, attachments: LuaValue) -> None:
        """The prompt was not sent: Lua gives the text and attachments back to the user."""
        self._bridge.lua(PROMPT_REFUSED, message, text, attachments)

    def prompt_draft(self, session_id: str, text: str, attachments: LuaValue) -> None:
        """A prompt made for the user: into the session's prompt window, to edit and send."""
        self._bridge.lua(PROMPT_DRAFT, session_id, text, attachments)

    # the review's notes (lua/acp_nvim/editor/review/notes.lua)

    def review_marks(self, marks: Sequence[NoteMark]) -> None:
        self._bridge.lua(REVIEW_MARKS, [to_lua(mark) for mark in marks])

    def review_drop(self, ids: Sequence[int]) -> None:
        self._bridge.lua(REVIEW_DROP, list(ids))

    def review_list(self, title: str, items: Sequence[NoteItem]) -> None:
        self._bridge.lua(REVIEW_LIST, title, [to_lua(item) for item in items])

    def elicitation_close(self, token: int) -> None:
        self._bridge.lua(ELICITATION_CLOSE, token)

    # the ACP Registry's agents (lua/acp_nvim/ui/agents.lua), a start chosen in the host's picker

    def agents_catalog(self, ids: list[str]) -> None:
        self._bridge.lua(AGENTS_CATALOG, ids)

    def start_agent(self, name: str) -> None:
        self._bridge.lua(START_AGENT, name)

    # process groups (lua/acp_nvim/editor/agent_groups.lua)

    def reaper_add(self, pgid: int, agent_name: str) -> None:
        self._bridge.lua(REAPER_ADD, pgid, agent_name)

    def reaper_remove(self, pgid: int) -> None:
        self._bridge.lua(REAPER_REMOVE, pgid)

    # files (lua/acp_nvim/editor/fs/init.lua, follow.lua)

    async def fs_read(
        self, path: str, line: int | None, limit: int | None, options: FsReadOptions
    ) -> FsReadAnswer:
        answer = await self._bridge.lua_result(FS_READ, path, line, limit, to_lua(options))
        return from_lua(answer, FsReadAnswer)

    async def fs_write(self, path: str, content: str, options: FsWriteOptions) -> FsWriteAnswer:
        answer = await self._bridge.lua_result(FS_WRITE, path, content, to_lua(options))
        return from_lua(answer, FsWriteAnswer)

    async def fs_find_buffer(self, path: str) -> int | None:
        found = await self._bridge.lua_result(FS_FIND_BUFFER, path)
        return found if isinstance(found, int) else None

    async def checkpoint(self, action: str, payload: LuaValue) -> LuaValue:
        return await self._bridge.lua_result(CHECKPOINT, action, payload)

    def fs_file_written(self, path: str) -> None:
        self._bridge.lua(FS_FILE_WRITTEN, path)

    def fs_forget_views(self, session_id: str) -> None:
        self._bridge.lua(FS_FORGET_VIEWS, session_id)

    def follow_show(self, path: str, line: int | None, bufnr: int | None) -> None:
        self._bridge.lua(FOLLOW_SHOW, path, line, bufnr)

    # the agent's own edits on disk (lua/acp_nvim/editor/fs/follow_disk.lua): a `FollowSink` of agent_edits.py

    def follow_edits(self, session_id: str, tool_call_id: str | None, files: list[FileEdit]) -> None:
        # Built by hand: msgspec would turn the bytes into base64; pynvim sends them as a Lua string.
        tables: list[LuaTable] = [
            {"path": f.path, "known": f.known, "absent": f.absent, "before": f.before, "real": f.real}
            for f in files
        ]
        self._bridge.lua(FOLLOW_DISK_APPLY, session_id, tool_call_id, tables)

    def watch_disk(self, session_id: str, roots: list[str], since: float) -> None:
        # With the turn's first chat change, in one call (Turns flushes the chat at once): the prompt goes
        # out without waiting on Neovim, and a turn costs Neovim no call more for its watch.
        self._bridge.lua_later(f"disk_watch:{session_id}", FOLLOW_DISK_WATCH, session_id, roots, since)

    def unwatch_disk(self, session_id: str) -> None:
        # With the turn's last chat change. Its own key: a watch of the next turn waiting too goes after it.
        self._bridge.lua_later(f"disk_unwatch:{session_id}", FOLLOW_DISK_UNWATCH, session_id)

    def show_edited(self, path: str) -> None:
        """`follow = true`: the file the agent edited on disk, at its first hunk (once it is followed)."""
        self.follow_show(path, None, None)

    # terminals (lua/acp_nvim/editor/terminal.lua)

    async def terminal_create(self, spec: TerminalSpec) -> TerminalCreated:
        return from_lua(await self._bridge.lua_result(TERMINAL_CREATE, to_lua(spec)), TerminalCreated)

    async def terminal_output(self, terminal_id: str, known_total: int) -> TerminalOutput:
        answer = await self._bridge.lua_result(TERMINAL_OUTPUT, terminal_id, known_total)
        return from_lua(answer, TerminalOutput)

    async def terminal_wait_for_exit(self, terminal_id: str, token: int) -> TerminalWait:
        answer = await self._bridge.lua_result(TERMINAL_WAIT_FOR_EXIT, terminal_id, token)
        return from_lua(answer, TerminalWait)

    async def terminal_kill(self, terminal_id: str) -> TerminalDone:
        return from_lua(await self._bridge.lua_result(TERMINAL_KILL, terminal_id), TerminalDone)

    def terminal_kill_many(self, terminal_ids: Sequence[str]) -> None:
        self._bridge.lua(TERMINAL_KILL_MANY, list(terminal_ids))

    async def terminal_release(self, terminal_id: str) -> TerminalDone:
        return from_lua(await self._bridge.lua_result(TERMINAL_RELEASE, terminal_id), TerminalDone)


def host_bootstrapped(nvim: NvimExec, info: LuaTable) -> None:
    """The host's answer to `acp_bootstrap`; sent on pynvim's thread before the bridge is up."""
    nvim.exec_lua(HOST_BOOTSTRAPPED, info, async_=True)


def config_configured(nvim: NvimExec, configured: LuaTable) -> None:
    """A `setup()` table validated (`Host.setup`): the normalized values Lua draws with, the message naming
    its bad fields, and which table it was; on pynvim's thread, in order with the calls that follow."""
    nvim.exec_lua(
        CONFIG_CONFIGURED,
        configured["options"],
        configured["invalid"],
        configured["generation"],
        async_=True,
    )


def leaving_noted(nvim: NvimExec) -> None:
    """The host's answer to `acp_leaving`: Lua may now end the agents, and their end is routine."""
    nvim.exec_lua(REAPER_LEAVING_NOTED, async_=True)
