"""The agent's requests and notifications to us, decoded by the method table and routed to the `Editor`: only
the methods we advertised are served, and only for the sessions this client opened.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio
import msgspec

from acp_nvim.client.agent.diagnostics import Diagnostics
from acp_nvim.client.editor import Editor, unknown_session
from acp_nvim.client.session.text_run import TextRun, TextRunReader
from acp_nvim.client.surface import CLIENT_ROUTES, advertised
from acp_nvim.jsonrpc import INVALID_PARAMS, MethodNotFound, NotificationRoute, RoutedNotification, RpcError
from acp_nvim.jsonrpc.wire import route_leading
from acp_nvim.protocol import codec
from acp_nvim.protocol import methods as m
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u

if TYPE_CHECKING:
    from acp_nvim.protocol.runtime import TypeForm

log = logging.getLogger("acp_nvim.client")

T = TypeVar("T")

# A handler of the table: each takes its own route's params type, which typing cannot tie to the route's entry
# in a table of them all (as with `NotificationRoute`): the route decodes that type, the handler takes it.
Handler = Callable[[Any], Awaitable[object]]


class SessionUpdateLine(RoutedNotification, kw_only=True, gc=False):
    """A whole `session/update` line, decoded in one pass (`Dispatcher.route`). Dropped once its params are
    handed on, and nothing in it can refer back to it: not tracked by the garbage collector (`gc=False`), a
    cost less per line."""

    method: Literal["session/update"]
    params: u.SessionNotification


class Dispatcher:
    """Routes the agent's requests and notifications to the editor, decoding them by the method table."""

    def __init__(self, editor: Editor, diagnostics: Diagnostics) -> None:
        self.editor = editor
        # An editor that takes the stream's bulk as `TextRun`s too (`session_stream`, beside its
        # `session_updates`) gets the template reader's runs; any other, notifications only.
        self._stream: Callable[[list[u.SessionNotification | TextRun]], None] | None = getattr(
            editor, "session_stream", None
        )
        self.diagnostics = diagnostics
        # Sessions this client opened, and the subagents announced on them (unstable `subagent_update`):
        # updates for any other are an agent bug and go no further.
        self.sessions: set[str] = set()
        # Each subagent's parent session.
        self.parents: dict[str, str] = {}
        # While a session/new is in flight its id is not known yet, and its first updates can be read before
        # the caller resumes with the answer: until then, updates for any session are let through.
        self._opening = 0
        self._permission_scopes: dict[str, set[anyio.CancelScope]] = {}
        caps = editor.client_capabilities()
        elicitation = caps.elicitation or s.ElicitationCapabilities()
        self._elicitation_modes = {
            mode for mode, cap in (("form", elicitation.form), ("url", elicitation.url)) if cap is not None
        }
        # The policy around the generated routes: the session check, and answers on a cancelled turn.
        policy: dict[str, Handler] = {
            m.SESSION_REQUEST_PERMISSION: self._request_permission,
            m.ELICITATION_CREATE: self._create_elicitation,
        }
        # Only what we advertised is served: an agent calling anything else gets "method not found".
        handlers: dict[str, tuple[Handler, TypeForm[object]]] = {}
        notifications: dict[str, tuple[Handler, TypeForm[object]]] = {}
        for method, route in CLIENT_ROUTES.items():
            if route.requires and not any(advertised(caps, path) for path in route.requires):
                continue
            handler = policy.get(method) or getattr(editor, route.handler)
            if route.is_notification:
                notifications[method] = (handler, route.params)
            else:
                handlers[method] = (handler, route.params)
        self._handlers = handlers
        self._notifications = notifications

    async def on_request(self, method: str, params: msgspec.Raw | None) -> object:
        route = self._handlers.get(method)
        if route is None:
            raise MethodNotFound.for_method(method)
        handler, params_type = route
        # A msgspec.ValidationError escaping here is answered -32602 with the field path by the connection.
        decoded = codec.decode(params, params_type)
        # Whatever the method, a session this client does not run is answered at once, before any service
        # (or the user) sees the request: a subagent's request nobody answers would hang the agent's turn.
        session_id = getattr(decoded, "session_id", None)
        if isinstance(session_id, str):
            self._check_session(session_id)
        return await handler(decoded)

    async def _until_turn_cancelled(
        self, session_id: str, ask: Callable[[], Awaitable[T]], cancelled: T
    ) -> T:
        """The user's answer from `ask`, or `cancelled` at once when the session's turn is cancelled."""
        scopes = self._permission_scopes.setdefault(session_id, set())
        with anyio.CancelScope() as scope:
            scopes.add(scope)
            try:
                return await ask()
            finally:
                scopes.discard(scope)
        return cancelled

    def _check_session(self, session_id: str) -> None:
        # While a session/new is in flight its id is unknown here: the editor, which knows its sessions,
        # answers for it then.
        if session_id not in self.sessions and not self._opening:
            raise unknown_session(session_id)

    async def _request_permission(self, params: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
        # An unknown session was answered with an error by `on_request`, not `cancelled`: nothing was
        # cancelled, the agent named a session that is not open.
        return await self._until_turn_cancelled(
            params.session_id,
            lambda: self.editor.request_permission(params),
            s.RequestPermissionResponse(outcome=s.RequestPermissionOutcomeCancelled()),
        )

    async def _create_elicitation(self, params: s.CreateElicitationRequest) -> s.CreateElicitationResponse:
        mode = "url" if isinstance(params, s.CreateElicitationRequestUrl) else "form"
        if mode not in self._elicitation_modes:
            raise RpcError(INVALID_PARAMS, f"{mode} elicitation is not supported by this client")
        session_id = params.session_id
        if session_id is None:
            return await self.editor.create_elicitation(params)
        # Like a permission request, an elicitation of a session whose turn is cancelled is answered
        # `cancel` at once.
        return await self._until_turn_cancelled(
            session_id, lambda: self.editor.create_elicitation(params), s.CreateElicitationResponseCancel()
        )

    @contextmanager
    def opening_session(self, session_id: str | None = None) -> Iterator[None]:
        """Around a request that opens a session. A known id (load, resume) counts as open at once: a load
        replays the history before it answers. An unknown one (new) lets every session through meanwhile."""
        if session_id is None:
            self._opening += 1
            try:
                yield
            finally:
                self._opening -= 1
            return
        known_before = session_id in self.sessions
        self.sessions.add(session_id)
        try:
            yield
        except BaseException:
            if not known_before:
                self.sessions.discard(session_id)
            raise

    def cancel_permissions(self, session_id: str) -> None:
        """The session's pending questions answered `cancelled`, and those of its subagents: cancelling the
        parent cancels its children."""
        for scope in self._permission_scopes.get(session_id, ()):
            scope.cancel()
        for child in self.children_of(session_id):
            self.cancel_permissions(child)

    def children_of(self, session_id: str) -> list[str]:
        return [child for child, parent in self.parents.items() if parent == session_id]

    def route(self) -> NotificationRoute:
        """For the connection: the valid `session/update` lines, the stream's bulk, decoded with their
        envelope in one pass and delivered at once; the others reach `on_notification`, which says why."""
        decoder = codec.decoder(SessionUpdateLine)
        leading = None
        if self._stream is not None:
            typed = decoder.decode
            reader = TextRunReader(lambda lines: route_leading(typed, lines), typed)
            leading = reader.leading
        return NotificationRoute(m.SESSION_UPDATE, decoder, self._session_updates, leading)

    def on_notification(self, method: str, params: msgspec.Raw | None) -> Awaitable[None] | None:
        if method != m.SESSION_UPDATE:
            return self._other_notification(method, params)
        # A session/update the route did not take (or a connection without it): tested first, handled
        # inline, without a coroutine.
        try:
            notification = codec.decode_session_update(params)
        except msgspec.ValidationError as err:
            log.warning("malformed session/update dropped: %s", err)
            self.diagnostics.report("malformed_update", str(err))
            return None
        if notification is not None:
            self._session_updates([notification])
        return None

    def _session_updates(self, notifications: list[u.SessionNotification | TextRun]) -> None:
        for notification in notifications:
            if type(notification) is TextRun:
                continue
            update = notification.update  # type: ignore[union-attr]
            # A subagent announced on its parent, before any of its own traffic (the protocol's rule): from
            # now on it is known, and its requests are answered.
            if (
                type(update) is u.SessionUpdateSubagentUpdate
                and update.session_id not in self.sessions
                and notification.session_id in self.sessions
            ):
                self.sessions.add(update.session_id)
                self.parents[update.session_id] = notification.session_id
        if not self._opening and not {n.session_id for n in notifications} <= self.sessions:
            notifications = [n for n in notifications if self._known_session(n.session_id)]
        if not notifications:
            return
        if self._stream is not None:
            self._stream(notifications)
        else:
            self.editor.session_updates(notifications)  # type: ignore[arg-type]

    def _known_session(self, session_id: str) -> bool:
        if session_id in self.sessions:
            return True
        log.debug("update for unknown session %r dropped", session_id)
        self.diagnostics.report("unknown_session", f"session {session_id!r}")
        return False

    async def _other_notification(self, method: str, params: msgspec.Raw | None) -> None:
        route = self._notifications.get(method)
        if route is None:
            log.debug("ignored notification %s", method)
            return
        handler, params_type = route
        try:
            decoded = codec.decode(params, params_type)
        except msgspec.ValidationError as err:
            log.warning("malformed %s dropped: %s", method, err)
            return
        await handler(decoded)
