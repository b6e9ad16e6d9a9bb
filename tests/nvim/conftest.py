"""A real headless Neovim with acp.nvim set up and its remote host registered the plugin's own way."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from bench.harness import wait_until
from tests.conftest import NODE, ROOT, TS_EXAMPLE_AGENT

if TYPE_CHECKING:
    from tests.nvim.agent_io import Scripted

# Records what the user would see: notifications, and the pickers (answered by a test-set script).
INSTRUMENT = r"""
_G.acp_test = { notes = {}, selects = {}, answers = {} }
vim.notify = function(msg, level)
  table.insert(acp_test.notes, { msg = msg, level = level })
end
vim.ui.select = function(items, opts, on_choice)
  local entry = { prompt = opts.prompt, items = {} }
  for _, item in ipairs(items) do
    table.insert(entry.items, opts.format_item and opts.format_item(item) or tostring(item))
  end
  table.insert(acp_test.selects, entry)
  local answer = table.remove(acp_test.answers, 1)
  if answer == "hold" then
    acp_test.held = on_choice
    return
  end
  local choice = nil
  for _, item in ipairs(items) do
    if answer ~= nil and item.id == answer then
      choice = item
    end
  end
  on_choice(choice)
end
"""


class Nvim:
    """A pynvim session plus the waiting helpers every test needs."""

    def __init__(self, nvim: Any) -> None:
        self.api = nvim

    def lua(self, code: str, *args: Any) -> Any:
        return self.api.exec_lua(code, *args)

    def wait(self, condition: str, timeout: float = 15.0, *args: Any) -> Any:
        """Waits (inside Neovim, processing events) until the Lua expression is truthy; fails on timeout."""
        ok = self.lua(
            "local args = {...}\n"
            f"return vim.wait({int(timeout * 1000)}, function() return ({condition}) and true or false end,"
            " 10)",
            *args,
        )
        if not ok:
            raise AssertionError(
                f"timed out waiting for: {condition}\nstatus: {self.status()}\n{self.debug()}"
            )
        return ok

    def status(self) -> dict[str, Any]:
        return self.lua("return require('acp_nvim').status()")  # type: ignore[no-any-return]

    def state(self) -> str:
        return str(self.status()["state"])

    def chat_lines(self) -> list[str]:
        return self.lua("return require('acp_nvim.ui.chat').lines()")  # type: ignore[no-any-return]

    def chat_text(self) -> str:
        return "\n".join(self.chat_lines())

    def notes(self) -> list[dict[str, Any]]:
        return self.lua("return acp_test.notes")  # type: ignore[no-any-return]

    def errors(self) -> list[str]:
        return [n["msg"] for n in self.notes() if n.get("level") == 4]

    def wait_mode(self, mode: str, timeout: float = 10.0) -> None:
        """Waits for the editor's mode, polling from here: a `:startinsert` takes effect only once Neovim is
        back in its main loop, which `wait` (a Lua loop inside one request) would hold off."""
        wait_until(lambda: self.api.api.get_mode()["mode"] == mode, timeout, f"mode {mode!r}")

    def wait_configured(self) -> None:
        """Starts the host (as a command would) and waits until it has validated the last setup() table and
        handed Lua its values."""
        self.lua("require('acp_nvim.host').start()")
        self.wait("require('acp_nvim.config').is_configured()")

    def wait_state(self, state: str, timeout: float = 20.0) -> None:
        self.wait(f"require('acp_nvim').status().state == {state!r}", timeout)

    def wait_chat(self, text: str, timeout: float = 20.0) -> None:
        self.wait(
            "table.concat(require('acp_nvim.ui.chat').lines(), '\\n'):find(args[1], 1, true) ~= nil",
            timeout,
            text,
        )

    def debug(self) -> str:
        try:
            return "chat:\n" + self.chat_text() + "\nnotes: " + repr(self.notes())
        except Exception as err:
            return f"(no debug info: {err})"


def setup_opts(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    opts: dict[str, Any] = {
        "python": sys.executable,
        "log": {"file": str(tmp_path / "acp_nvim.log")},
        "agents": {"ts": {"cmd": NODE, "args": [str(TS_EXAMPLE_AGENT)]}},
        "default_agent": "ts",
        # No test reaches the public ACP Registry: tests/nvim/test_registry.py serves its own.
        "registry": {"enabled": False},
    }
    opts.update(extra)
    return opts


def configure(nvim: Nvim, tmp_path: Path, **extra: Any) -> Any:
    """`setup()` with the tests' options (`setup_opts`) and `extra` over them; what it returned."""
    return nvim.lua("return require('acp_nvim').setup(...)", setup_opts(tmp_path, **extra))


def help_tags(nvim: Nvim, tmp_path: Path) -> set[str]:
    """The tags Neovim's :helptags finds in doc/acp_nvim.txt (run on a copy: the checkout stays clean)."""
    doc = tmp_path / "doc"
    doc.mkdir()
    shutil.copy(ROOT / "doc" / "acp_nvim.txt", doc / "acp_nvim.txt")
    nvim.api.command(f"helptags {doc}")
    return {line.split("\t")[0] for line in (doc / "tags").read_text().splitlines()}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The folder a test's agent works in (its session's cwd)."""
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def agent(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> Scripted:
    """The scripted agent, driven step by step by the test (tests/nvim/agent_io.py)."""
    # Imported here: agent_io imports this module.
    from tests.nvim.agent_io import Scripted

    return Scripted(nvim, tmp_path, schema)


@pytest.fixture
def nvim(nvim_clean: Any, tmp_path: Path) -> Iterator[Nvim]:
    """Neovim with `setup{ python = sys.executable, ... }`, vim.notify and vim.ui.select recorded."""
    session = Nvim(nvim_clean)
    session.lua(INSTRUMENT)
    ok = session.lua("return require('acp_nvim').setup(...)", setup_opts(tmp_path))
    assert ok, session.notes()
    session.api.command(f"cd {tmp_path}")
    yield session
    try:
        session.lua("require('acp_nvim').stop()")
        session.wait("require('acp_nvim').status().state ~= 'running'", 5)
    except Exception:
        pass
