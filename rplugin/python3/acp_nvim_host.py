"""pynvim declarations only, one per row of `acp_nvim.nvim.host_methods.METHODS`, each into `Host.call`.

Registered by the Lua layer (`lua/acp_nvim/host/init.lua`), not by :UpdateRemotePlugins. Lua spawns the host
and sends `acp_bootstrap` at once, without waiting: the host answers it with a Lua call once loaded. The
synchronous `AcpNvimBootstrap` (versions included) is for :checkhealth. Everything else arrives as `rpcnotify`
(or `rpcrequest`, for the synchronous rows) on the host's channel.
"""

from __future__ import annotations

from collections.abc import Callable

import pynvim

from acp_nvim.nvim.bridge import NvimLike
from acp_nvim.nvim.host import Host
from acp_nvim.nvim.host_methods import METHODS, HostMethod
from acp_nvim.nvim.lua_values import LuaValue


class AcpNvimPlugin:
    def __init__(self, nvim: NvimLike) -> None:
        self.host = Host(nvim)


def export(method: HostMethod) -> Callable[..., LuaValue]:
    """The pynvim handler of one method: pynvim finds it by the attributes its decorator sets."""
    if method.function:

        def function(plugin: AcpNvimPlugin, args: list[object]) -> LuaValue:
            return plugin.host.call(method, args)

        pynvim.function(method.name, sync=method.sync)(function)
        return function

    def rpc(plugin: AcpNvimPlugin, *args: object) -> LuaValue:
        return plugin.host.call(method, args)

    pynvim.rpc_export(method.name, sync=method.sync)(rpc)
    return rpc


for _method in METHODS:
    setattr(AcpNvimPlugin, _method.name, export(_method))
# Last: `plugin` marks the handlers already on the class as methods (no Neovim object passed first).
pynvim.plugin(AcpNvimPlugin)
