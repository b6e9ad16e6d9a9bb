"""The application composed: every part built once, on one `Runs` (agents and sessions) and one port.

The controller (`acp_nvim/nvim/controller.py`) builds it on Neovim and is its `AgentRunner`; the unit tests
build it on an in-memory port.
"""

from __future__ import annotations

from acp_nvim.app.auth import AuthFlow
from acp_nvim.app.chat.chats import Chats
from acp_nvim.app.checkpoints.service import Checkpoints
from acp_nvim.app.commands import AgentRunner, Commands
from acp_nvim.app.edits import EditFollower, NoFollower
from acp_nvim.app.permissions.service import Permissions
from acp_nvim.app.port import NeovimPort
from acp_nvim.app.review.notes import ReviewNotes
from acp_nvim.app.runs import Runs
from acp_nvim.app.sessions.forking import Forks
from acp_nvim.app.sessions.incoming import Incoming
from acp_nvim.app.sessions.modes import ModeCommands
from acp_nvim.app.sessions.opening import SessionCommands
from acp_nvim.app.sessions.turns import Turns
from acp_nvim.app.status import StatusBoard


class Application:
    def __init__(
        self,
        runs: Runs,
        port: NeovimPort,
        runner: AgentRunner,
        edits: EditFollower | None = None,
    ) -> None:
        edits = edits or NoFollower()
        self.runs = runs
        self.port = port
        self.status = StatusBoard(runs, port)
        self.chats = Chats(runs, port, self.status, edits)
        self.auth = AuthFlow(port)
        self.modes = ModeCommands(runs, port, self.status)
        self.checkpoints = Checkpoints(runs, port)
        self.turns = Turns(runs, port, self.status, edits, self.checkpoints)
        self.sessions = SessionCommands(
            runs, port, self.status, self.chats, self.auth, self.modes, self.turns
        )
        self.forks = Forks(runs, port, self.status, self.chats, self.sessions, self.turns)
        self.permissions = Permissions(runs, port)
        self.review = ReviewNotes(runs, port)
        self.incoming = Incoming(runs, port, self.status, edits, self.permissions)
        self.commands = Commands(
            runs,
            port,
            self.status,
            runner,
            chats=self.chats,
            auth=self.auth,
            modes=self.modes,
            sessions=self.sessions,
            turns=self.turns,
        )
