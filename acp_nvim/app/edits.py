"""What the application tells the follower of the agent's own edits (`client/files/agent_edits.py`): each
update of a session, the start and end of its turns, and its end. Declared here so that the application's
modules need no Neovim and the unit tests can leave it out."""

from __future__ import annotations

from typing import Protocol

from acp_nvim.protocol import schema as s


class EditFollower(Protocol):
    def on_update(self, session_id: str, update: s.SessionUpdate) -> None: ...

    def turn_started(self, session_id: str) -> None: ...

    def turn_ended(self, session_id: str) -> None: ...

    def forget(self, session_id: str) -> None: ...


class NoFollower:
    """Follows nothing: for an application without an editor to show the edits in."""

    def on_update(self, session_id: str, update: s.SessionUpdate) -> None:
        pass

    def turn_started(self, session_id: str) -> None:
        pass

    def turn_ended(self, session_id: str) -> None:
        pass

    def forget(self, session_id: str) -> None:
        pass
