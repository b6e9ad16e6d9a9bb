"""The client's per-method surface (`acp_nvim/client/surface.py`) is generated from the npm package's method
table by tools/gen_surface.py: a method added, renamed or regated there fails here until it is regenerated."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from acp_nvim.client import surface
from acp_nvim.protocol import methods

ROOT = Path(__file__).resolve().parents[3]


def test_the_generated_surface_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_surface.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_the_routes_carry_the_gating_the_client_advertises() -> None:
    """fs from the schema's own words, terminal and elicitation from the generator's table: a request the
    client did not advertise is never served."""
    routes = surface.CLIENT_ROUTES
    assert routes[methods.FS_READ_TEXT_FILE].requires == (("fs", "read_text_file"),)
    assert routes[methods.FS_WRITE_TEXT_FILE].requires == (("fs", "write_text_file"),)
    assert all(routes[m].requires == (("terminal",),) for m in routes if m.startswith("terminal/"))
    assert routes[methods.SESSION_REQUEST_PERMISSION].requires == ()
    assert routes[methods.ELICITATION_COMPLETE].is_notification


def test_the_agent_gating_is_what_the_schema_and_the_protocol_state() -> None:
    """The session methods from the schema's own words, logout from the generator's table: `AgentCalls`
    refuses the call, before sending it, unless the agent advertised one of these."""
    assert surface.AGENT_GATING == {
        methods.SESSION_LOAD: (("load_session",),),
        methods.SESSION_RESUME: (("session_capabilities", "resume"),),
        methods.SESSION_LIST: (("session_capabilities", "list"),),
        methods.SESSION_DELETE: (("session_capabilities", "delete"),),
        methods.SESSION_CLOSE: (("session_capabilities", "close"),),
        methods.LOGOUT: (("auth", "logout"),),
    }
