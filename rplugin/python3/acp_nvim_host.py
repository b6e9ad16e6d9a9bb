# mypy: disable-error-code="untyped-decorator"
"""pynvim declarations only; every handler is one line into `acp_nvim.nvim.host`.

Registered by the Lua layer (`lua/acp_nvim/host.lua`), not by :UpdateRemotePlugins. `AcpNvimBootstrap` starts
the host and reports its versions; everything else arrives as `rpcnotify` on the host's channel.
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
        return self._host.bootstrap(args[0] if args else None)

    @pynvim.rpc_export("acp_start")
    def start(self, spec: Any) -> None:
        self._host.start(spec)

    @pynvim.rpc_export("acp_stop")
    def stop(self) -> None:
        self._host.stop()

    @pynvim.rpc_export("acp_prompt")
    def prompt(self, text: str, selections: Any = None) -> None:
        self._host.prompt(text, selections)

    @pynvim.rpc_export("acp_cancel")
    def cancel(self) -> None:
        self._host.cancel()

    @pynvim.rpc_export("acp_permission_answer")
    def permission_answer(self, request_id: int, option_id: str | None) -> None:
        self._host.permission_answer(request_id, option_id)

    @pynvim.rpc_export("acp_status")
    def status(self) -> None:
        self._host.push_status()
