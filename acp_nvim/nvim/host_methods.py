"""Every host method Lua calls, in one table: (name, the Struct its arguments decode into, the call).

Lua's half is `lua/acp_nvim/host/api.lua`; the rplugin (`rplugin/python3/acp_nvim_host.py`) declares one
pynvim export per row, and `Host.call` is the door every call goes through: the arguments are decoded into the
row's Struct there, so a handler never sees an untyped value, and a malformed call from Lua (wrong count,
wrong type) is one warning instead of a traceback. Positional arguments decode into `array_like` Structs (a
trailing argument with a default may be left out); a table argument is a plain Struct inside one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple, TypeVar

import msgspec

from acp_nvim.app import agent_log
from acp_nvim.app.config.presets import NO_AGENT_NAMED
from acp_nvim.app.port import WARN
from acp_nvim.app.review.note import ReviewRequest
from acp_nvim.client import elicitation_forms
from acp_nvim.client.elicitation_forms import FieldCheck
from acp_nvim.nvim import lua_api
from acp_nvim.nvim.controller import Controller
from acp_nvim.nvim.lua_values import LuaValue, json_to_lua

if TYPE_CHECKING:
    from acp_nvim.nvim.host import Host

# The key of the answer a synchronous call gets when it is malformed (api.lua returns false and its text).
BAD_CALL = "bad_call"

# ---- what Lua sends in tables --------------------------------------------------------------------------


class StartRequest(msgspec.Struct, kw_only=True, frozen=True):
    """What Lua asks an agent's start with: its name (None: the default one) and Neovim's cwd."""

    name: str | None = None
    cwd: str = ""


class SetupTable(msgspec.Struct, kw_only=True, frozen=True):
    """A `setup()` table as `lua/acp_nvim/config.lua` sends it: raw (the host's Settings check it), and which
    call it came from."""

    options: object = None
    generation: int = 0


class BootstrapOptions(msgspec.Struct, kw_only=True, frozen=True):
    """What the host is started with (`bootstrap_options` in lua/acp_nvim/host/init.lua): the log, the setup()
    table in force and Neovim's stdpath() folders."""

    log: str | None = None
    log_level: str | None = None
    setup: SetupTable | None = None
    data: str | None = None
    cache: str | None = None
    state: str | None = None
    # v:servername: the Neovim MCP server's way back to this Neovim.
    servername: str | None = None


# ---- the arguments of each method, in Lua's order ---------------------------------------------------------


class Positional(msgspec.Struct, array_like=True, frozen=True, forbid_unknown_fields=True):
    """A call's positional arguments: too many, too few or of the wrong type is a malformed call."""


class NoArguments(Positional, frozen=True):
    pass


class Bootstrap(Positional, frozen=True):
    options: BootstrapOptions | None = None


class Start(Positional, frozen=True):
    request: StartRequest


class Target(Positional, frozen=True):
    """The session a command is for (None: the current one)."""

    session_id: str | None = None


class CancelTarget(Positional, frozen=True):
    """`:AcpCancel [what]`: the turn of a session (None: the current one), or `what` of it ("subagent")."""

    session_id: str | None = None
    what: str | None = None


class Session(Positional, frozen=True):
    session_id: str


class Prompt(Positional, frozen=True):
    text: str
    # The attachments are checked where they are read (app/sessions/prompt_content.py): a bad one is refused
    # with the prompt's text given back, never lost at the door.
    selections: object = None
    session_id: str | None = None


class Queue(Positional, frozen=True):
    """:AcpQueue: an action on the queued prompt `prompt_id` (None: the next to go); an edit's new text and
    the files and media it mentions (checked where they are read, as a prompt's are)."""

    session_id: str | None
    action: str
    prompt_id: int | None = None
    text: str | None = None
    mentions: object = None


class Sessions(Positional, frozen=True):
    request: StartRequest
    action: str
    everywhere: bool
    session_id: str | None = None


class Mode(Positional, frozen=True):
    session_id: str | None
    mode_id: str | None = None


class Config(Positional, frozen=True):
    session_id: str | None
    option_id: str | None = None
    value: str | None = None


class Auth(Positional, frozen=True):
    session_id: str | None
    method_id: str | None = None


class AddDir(Positional, frozen=True):
    session_id: str | None
    directory: str


class Words(Positional, frozen=True):
    """A command's words (`:AcpPermissions revoke 2`); the chat's checkpoint key sends an item id, an int."""

    session_id: str | None
    args: list[str | int] = []

    def words(self) -> list[str]:
        return [str(arg) for arg in self.args]


class DiskChanged(Positional, frozen=True):
    session_id: str
    paths: list[str]


class Reply(Positional, frozen=True):
    """A late answer to the question asked with `token`: a picker's id, an exit code, a form's values."""

    token: int
    value: object = None

    def __post_init__(self) -> None:
        lua_value(self.value)


class ElicitationCheck(Positional, frozen=True):
    """One form field's answer, with the check the host sent with the field (handed back unread)."""

    check: FieldCheck
    # The typed text, or the values chosen of a multi-select.
    answer: str | list[str] | None = None


class Review(Positional, frozen=True):
    request: ReviewRequest


class Setup(Positional, frozen=True):
    setup: SetupTable


class RegistryAgents(Positional, frozen=True):
    action: str = ""
    agent_id: str = ""


class ConfigReport(Positional, frozen=True):
    """Neovim's $PATH: the installed versions of the agents are read where Neovim would find them."""

    path: str | None = None


class LogView(Positional, frozen=True):
    agent_name: str | None = None


class LogSave(Positional, frozen=True):
    agent_name: str | None
    path: str


# ---- the table ----------------------------------------------------------------------------------------

P = TypeVar("P", bound=Positional)


class HostMethod(NamedTuple):
    name: str
    params: type[Positional]
    # Decodes the arguments (msgspec.ValidationError when they are malformed) into the call to make.
    bind: Callable[[Sequence[object]], Callable[[Host], LuaValue]]
    # Lua waits for the answer (rpcrequest); else a notification, whose answer is dropped.
    sync: bool = False
    # A remote-plugin function (`vim.fn.Name`): its arguments arrive as one list.
    function: bool = False


def method(
    name: str,
    params: type[P],
    call: Callable[[Host, P], LuaValue],
    *,
    sync: bool = False,
    function: bool = False,
) -> HostMethod:
    def bind(args: Sequence[object]) -> Callable[[Host], LuaValue]:
        decoded = msgspec.convert(list(args), params)
        return lambda host: call(host, decoded)

    return HostMethod(name, params, bind, sync, function)


def lua_value(value: object) -> LuaValue:
    """What msgpack decoded is a LuaValue by construction; its outer type is checked here (msgspec cannot
    declare the recursive alias)."""
    if value is None or isinstance(value, (bool, int, float, str, bytes, list, dict)):
        return value
    # A TypeError in a Struct's __post_init__ is a ValidationError of the call, a malformed one.
    raise TypeError(f"not a value Lua sends: {type(value).__name__}")


def _start(host: Host, p: Start) -> None:
    registry, configured = host.registry(), host.settings.agent_names()

    async def pick(controller: Controller) -> None:
        # No name, no default agent: nothing starts but the agent chosen among the configured ones and the ACP
        # Registry's (started as :AcpStart {name}); the status Lua assumed is undone.
        controller.app.status.push()
        await controller.catalog.pick(registry, configured, None)

    name = p.request.name or host.settings.config.default_agent or ""
    host.agent_command(
        p.request,
        lambda c, spec: c.app.commands.start(spec),
        no_agent=pick,
        refused=lambda c, why: c.app.status.refuse(name, why),
    )


def _restart(host: Host, p: Start) -> None:
    async def none_running(controller: Controller) -> None:
        controller.app.status.push()
        controller.notify("no agent to restart: start one with :AcpStart", WARN)

    host.agent_command(p.request, lambda c, spec: c.app.commands.restart(spec), no_agent=none_running)


def _sessions(host: Host, p: Sessions) -> None:
    async def unnamed(controller: Controller) -> None:
        controller.notify(NO_AGENT_NAMED, WARN)

    host.agent_command(
        p.request,
        lambda c, spec: c.app.commands.sessions_command(spec, p.action, p.everywhere, p.session_id),
        no_agent=unnamed,
        session=False,
    )


def _disk_changed(host: Host, p: DiskChanged) -> None:
    async def follow(controller: Controller) -> None:
        controller.agent_edits.disk_changed(p.session_id, p.paths)

    host.submit(follow)


def _reply(host: Host, p: Reply) -> None:
    value = lua_value(p.value)

    async def resolve(controller: Controller) -> None:
        controller.ui.resolve(p.token, value)

    host.submit(resolve)


def _leaving(host: Host, _: NoArguments) -> None:
    """Neovim is quitting and is about to end the agents itself (VimLeavePre): their end is no fault. Set
    here, on pynvim's thread, before the answer goes: the agents die only after Lua has it."""
    host.leaving()
    lua_api.leaving_noted(host.nvim)


METHODS: tuple[HostMethod, ...] = (
    # start-up: announced at spawn (answered with a call back), or synchronously with versions (:checkhealth)
    method("acp_bootstrap", Bootstrap, lambda h, p: h.announce(p.options)),
    method(
        "AcpNvimBootstrap",
        Bootstrap,
        lambda h, p: h.bootstrap(p.options, versions=True),
        sync=True,
        function=True,
    ),
    method("acp_setup", Setup, lambda h, p: h.setup(p.setup)),
    # agents and prompts
    method("acp_start", Start, _start),
    method("acp_restart", Start, _restart),
    method("acp_stop", Target, lambda h, p: h.submit(lambda c: c.app.commands.stop(p.session_id))),
    method(
        "acp_prompt",
        Prompt,
        lambda h, p: h.submit(lambda c: c.app.turns.prompt(p.text, p.selections, p.session_id)),
    ),
    method(
        "acp_cancel", CancelTarget, lambda h, p: h.submit(lambda c: c.app.turns.cancel(p.session_id, p.what))
    ),
    method(
        "acp_steer",
        Prompt,
        lambda h, p: h.submit(lambda c: c.app.turns.steer(p.text, p.selections, p.session_id)),
    ),
    method(
        "acp_queue",
        Queue,
        lambda h, p: h.submit(
            lambda c: c.app.turns.queue_action(p.session_id, p.action, p.prompt_id, p.text, p.mentions)
        ),
    ),
    # sessions, modes, options, login
    method("acp_sessions", Sessions, _sessions),
    method("acp_fork", Target, lambda h, p: h.submit(lambda c: c.app.forks.fork(p.session_id))),
    method("acp_mode", Mode, lambda h, p: h.submit(lambda c: c.app.commands.mode(p.session_id, p.mode_id))),
    method(
        "acp_config",
        Config,
        lambda h, p: h.submit(lambda c: c.app.commands.config(p.session_id, p.option_id, p.value)),
    ),
    method("acp_auth", Auth, lambda h, p: h.submit(lambda c: c.app.commands.auth(p.session_id, p.method_id))),
    method("acp_logout", Target, lambda h, p: h.submit(lambda c: c.app.commands.logout(p.session_id))),
    method(
        "acp_add_dir",
        AddDir,
        lambda h, p: h.submit(lambda c: c.app.commands.add_dir(p.session_id, p.directory)),
    ),
    method("acp_focus", Session, lambda h, p: h.submit(lambda c: c.app.commands.focus(p.session_id))),
    method("acp_close", Session, lambda h, p: h.submit(lambda c: c.app.commands.close_session(p.session_id))),
    method(
        "acp_permissions",
        Words,
        lambda h, p: h.submit(lambda c: c.app.permissions.command(p.session_id, p.words())),
    ),
    method(
        "acp_checkpoint",
        Words,
        lambda h, p: h.submit(lambda c: c.app.checkpoints.command(p.session_id, p.words())),
    ),
    method("acp_review", Review, lambda h, p: h.submit(lambda c: c.app.review.command(p.request))),
    method("acp_disk_changed", DiskChanged, _disk_changed),
    method("acp_leaving", NoArguments, _leaving),
    method("acp_reply", Reply, _reply),
    # no state: all the check needs is sent
    method(
        "acp_elicitation_check",
        ElicitationCheck,
        lambda _, p: json_to_lua(elicitation_forms.check_answer(p.check, p.answer)),
        sync=True,
    ),
    # the ACP Registry (its code is loaded when first used: see Controller._registry)
    method("acp_registry_load", NoArguments, lambda h, _: h.registry_load()),
    method("acp_registry_agents", RegistryAgents, lambda h, p: h.registry_agents(p.action, p.agent_id)),
    method("acp_registry_health", NoArguments, lambda h, _: h.registry_health(), sync=True),
    method("acp_config_report", ConfigReport, lambda h, p: h.config_report(p.path), sync=True),
    # :AcpLog, on pynvim's thread: the logs are read under their own lock
    method(
        "acp_log_view", LogView, lambda _, p: json_to_lua(agent_log.view(p.agent_name or None)), sync=True
    ),
    method(
        "acp_log_save",
        LogSave,
        lambda _, p: json_to_lua(agent_log.save(p.agent_name or None, p.path)),
        sync=True,
    ),
    method("acp_log_names", NoArguments, lambda _, __: list(agent_log.names()), sync=True),
)
