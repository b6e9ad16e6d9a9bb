# mypy: disable-error-code="untyped-decorator"
"""pynvim declarations only; every handler is one line into `acp_nvim.nvim.host`.

Registered by the Lua layer (`lua/acp_nvim/host/init.lua`), not by :UpdateRemotePlugins. Lua spawns the host
and sends `acp_bootstrap` at once, without waiting: the host answers it with a Lua call once loaded. The
synchronous `AcpNvimBootstrap` (versions included) is for :checkhealth. Everything else arrives as `rpcnotify`
on the host's channel.
"""

from __future__ import annotations

from typing import Any

import pynvim

from acp_nvim.nvim.host import Host


@pynvim.plugin
class AcpNvimPlugin:
    def __init__(self, nvim: Any) -> None:
        self._host = Host(nvim)

    @pynvim.function("AcpNvimBootstrap", sync=True)
    def bootstrap(self, args: list[Any]) -> dict[str, Any]:
        return self._host.bootstrap(args[0] if args else None, versions=True)

    @pynvim.rpc_export("acp_bootstrap")
    def announce(self, options: Any = None) -> None:
        self._host.announce(options)

    @pynvim.rpc_export("acp_start")
    def start(self, request: Any) -> None:
        self._host.start(request)

    @pynvim.rpc_export("acp_stop")
    def stop(self, session_id: str | None = None) -> None:
        self._host.stop(session_id)

    @pynvim.rpc_export("acp_restart")
    def restart(self, request: Any) -> None:
        self._host.restart(request)

    @pynvim.rpc_export("acp_prompt")
    def prompt(self, text: str, selections: Any = None, session_id: str | None = None) -> None:
        self._host.prompt(text, selections, session_id)

    @pynvim.rpc_export("acp_cancel")
    def cancel(self, session_id: str | None = None) -> None:
        self._host.cancel(session_id)

    @pynvim.rpc_export("acp_sessions")
    def sessions(self, request: Any, action: str, everywhere: bool, session_id: str | None = None) -> None:
        self._host.sessions(request, action, everywhere, session_id)

    @pynvim.rpc_export("acp_mode")
    def mode(self, session_id: str | None, mode_id: str | None = None) -> None:
        self._host.mode(session_id, mode_id)

    @pynvim.rpc_export("acp_config")
    def config(self, session_id: str | None, option_id: str | None = None, value: str | None = None) -> None:
        self._host.config(session_id, option_id, value)

    @pynvim.rpc_export("acp_auth")
    def auth(self, session_id: str | None, method_id: str | None = None) -> None:
        self._host.auth(session_id, method_id)

    @pynvim.rpc_export("acp_logout")
    def logout(self, session_id: str | None = None) -> None:
        self._host.logout(session_id)

    @pynvim.rpc_export("acp_add_dir")
    def add_dir(self, session_id: str | None, directory: str) -> None:
        self._host.add_dir(session_id, directory)

    @pynvim.rpc_export("acp_permissions")
    def permissions(self, session_id: str | None, args: list[str]) -> None:
        self._host.permissions(session_id, args)

    @pynvim.rpc_export("acp_checkpoint")
    def checkpoint(self, session_id: str | None, args: list[str]) -> None:
        self._host.checkpoint(session_id, args)

    @pynvim.rpc_export("acp_leaving")
    def leaving(self) -> None:
        self._host.leaving()

    @pynvim.rpc_export("acp_disk_changed")
    def disk_changed(self, session_id: str, paths: list[str]) -> None:
        self._host.disk_changed(session_id, paths)

    @pynvim.rpc_export("acp_close")
    def close(self, session_id: str) -> None:
        self._host.close(session_id)

    @pynvim.rpc_export("acp_focus")
    def focus(self, session_id: str) -> None:
        self._host.focus(session_id)

    @pynvim.rpc_export("acp_reply")
    def reply(self, token: Any, value: Any = None) -> None:
        self._host.reply(token, value)

    @pynvim.rpc_export("acp_setup")
    def setup(self, options: Any) -> None:
        self._host.setup(options)

    @pynvim.rpc_export("acp_config_report", sync=True)
    def config_report(self, path: Any = None) -> dict[str, Any]:
        return self._host.config_report(path)

    @pynvim.rpc_export("acp_registry_load")
    def registry_load(self) -> None:
        self._host.registry_load()

    @pynvim.rpc_export("acp_registry_agents")
    def registry_agents(self, action: str = "", agent_id: str = "") -> None:
        self._host.registry_agents(action, agent_id)

    @pynvim.rpc_export("acp_registry_health", sync=True)
    def registry_health(self) -> dict[str, Any]:
        return self._host.registry_health()

    # ---- :AcpLog (synchronous: Lua shows the answer at once) ---------------------------------------

    @pynvim.rpc_export("acp_log_view", sync=True)
    def log_view(self, agent_name: str | None = None) -> dict[str, Any]:
        return self._host.log_view(agent_name)

    @pynvim.rpc_export("acp_log_save", sync=True)
    def log_save(self, agent_name: str | None, path: str) -> dict[str, Any]:
        return self._host.log_save(agent_name, path)

    @pynvim.rpc_export("acp_log_names", sync=True)
    def log_names(self) -> list[str]:
        return self._host.log_names()

    @pynvim.rpc_export("acp_elicitation_check", sync=True)
    def elicitation_check(self, check: Any, answer: Any = None) -> dict[str, Any]:
        return self._host.elicitation_check(check, answer)
