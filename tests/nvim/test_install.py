"""The real build step: a private environment from PyPI, then the plugin's host running from it.

Slow (pip downloads and installs the pinned runtime dependencies), and the only test that shows a user's
installation works without `opts.python`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from tests.nvim.conftest import INSTRUMENT, Nvim


def test_build_then_start_the_demo_agent_from_the_private_environment(
    nvim_clean: Any, tmp_path: Path
) -> None:
    nvim = Nvim(nvim_clean)
    nvim.lua(INSTRUMENT)
    base_python = getattr(sys, "_base_executable", sys.executable)
    result = nvim.lua("return { require('acp_nvim.build').run({ python = ... }) }", base_python)
    assert result[0] is True, result
    venv = Path(nvim.lua("return require('acp_nvim.build').venv()"))
    assert venv.is_relative_to(Path(os.environ["XDG_DATA_HOME"]))
    # No opts.python: the host must come from the private environment, the user's provider untouched.
    assert nvim.lua("return require('acp_nvim').setup({ default_agent = 'demo' })")
    assert nvim.lua("return require('acp_nvim.config').python()") == str(venv / "bin" / "python")
    nvim.api.command(f"cd {tmp_path}")
    nvim.api.command("AcpStart")
    nvim.wait("require('acp_nvim').status().state == 'ready'", 60)
    assert nvim.lua("return require('acp_nvim').statusline()").startswith("acp.nvim demo agent")
    assert nvim.api.eval("exists('g:python3_host_prog')") == 0
    nvim.lua("require('acp_nvim').stop()")
