"""What the host gives the checkpoints: their store under Neovim's stdpath("state"), the options in force,
and :checkhealth's facts (git, the store's size)."""

from __future__ import annotations

import os

import msgspec

from acp_nvim.app.checkpoints.service import health
from acp_nvim.app.config.settings import Settings
from acp_nvim.app.port import Spawn
from acp_nvim.nvim import lua_values
from acp_nvim.nvim.controller import Controller
from acp_nvim.nvim.lua_values import LuaTable


def root(stdpath: dict[str, str]) -> str:
    """stdpath("state")/acp_nvim/checkpoints, as the bootstrap said (else XDG's, else ~/.local/state)."""
    state = stdpath.get("state") or os.path.join(
        os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state"),
        os.environ.get("NVIM_APPNAME") or "nvim",
    )
    return os.path.join(state, "acp_nvim", "checkpoints")


def attach(controller: Controller, stdpath: dict[str, str], settings: Settings, spawn: Spawn) -> None:
    controller.app.checkpoints.attach(root(stdpath), lambda: settings.config.checkpoints, spawn)


def with_facts(stdpath: dict[str, str], report: msgspec.Struct) -> LuaTable:
    """:checkhealth's report of the options and agents, with the checkpoints' facts."""
    return {**lua_values.to_lua(report), "checkpoints": lua_values.to_lua(health(root(stdpath)))}
