"""Elicitation: the agent asks the user for structured input (a form) or to visit a URL.

One elicitation is shown at a time, in the one queue of pickers (the port's `pickers`: pickers do not stack
well). The editor walks the user through the fields (`vim.ui.select` / `vim.ui.input` in Neovim) and answers
with an action and the content (the port's `ask_elicitation`). Every rule is `client/elicitation_forms.py`'s:
each answer is checked as the user gives it (the host's `acp_elicitation_check`), and the whole content
against the requested schema before it goes to the agent; a form that fails there (its `pattern`, say) is
asked once more with the problems shown, then cancelled. A request the agent or the user cancels while its
picker is open is answered `cancel`, and the late pick is ignored.

URL mode follows MCP's: "Open" opens the URL and answers `accept` at once (the interaction itself happens
out of band); `elicitation/complete` then tells the user it is done. A completion that arrives while the
picker is still open closes it and answers `accept` (the user finished it some other way). Unknown and
already completed ids are ignored, as the protocol requires.
"""

from __future__ import annotations

import logging

import anyio
import msgspec

from acp_nvim.app.editor.port import EditorPort
from acp_nvim.app.port import INFO
from acp_nvim.client.elicitation_forms import form_view, openable, scope_label, validate_content
from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.elicitation")

#: How often a form is asked when the content fails validation here.
ATTEMPTS = 2

#: What `initialize` advertises: both modes are served here.
ELICITATION_CAPABILITIES = s.ElicitationCapabilities(
    form=s.ElicitationFormCapabilities(), url=s.ElicitationUrlCapabilities()
)


class _Pending(msgspec.Struct):
    request: s.CreateElicitationRequest
    action: str = "cancel"
    content: object = None
    completed: bool = False


class ElicitationBroker:
    def __init__(self, editor: EditorPort) -> None:
        """`editor` shows the form and carries the answer back (its `pickers` lock is held while one is
        open)."""
        self._editor = editor
        # Elicitations on screen, with the scope of their current question (a completion gives it up).
        self._open: dict[int, tuple[anyio.CancelScope, _Pending]] = {}
        # URL elicitations the user accepted, waiting for `elicitation/complete`: id -> message.
        self._accepted_urls: dict[str, str] = {}

    async def ask(self, request: s.CreateElicitationRequest) -> s.CreateElicitationResponse:
        async with self._editor.pickers:
            if isinstance(request, s.CreateElicitationRequestUrl):
                return await self._ask_url(request)
            return await self._ask_form(request)

    async def _wait(self, pending: _Pending, view: dict[str, object]) -> None:
        """Shows `view` and waits for the user's action and content (each attempt a question of its own, so an
        answer to an earlier attempt never counts). Cancelled from outside (session/cancel,
        $/cancel_request, agent gone), the port closes the form: the rest of it is not asked."""
        scope = anyio.CancelScope()
        key = id(scope)
        self._open[key] = (scope, pending)
        try:
            with scope:
                answer = await self._editor.ask_elicitation(view)
                pending.action = answer.action if answer.action in ("accept", "decline") else "cancel"
                pending.content = answer.content
        finally:
            del self._open[key]

    async def _ask_form(self, request: s.CreateElicitationRequestForm) -> s.CreateElicitationResponse:
        pending = _Pending(request)
        view = form_view(request)
        for _ in range(ATTEMPTS):
            await self._wait(pending, view)
            if pending.action == "decline":
                return s.CreateElicitationResponseDecline()
            if pending.action != "accept":
                return s.CreateElicitationResponseCancel()
            content, errors = validate_content(request.requested_schema, pending.content)
            if not errors:
                return s.CreateElicitationResponseAccept(content=content)
            view = form_view(request, errors, pending.content)
        return s.CreateElicitationResponseCancel()

    async def _ask_url(self, request: s.CreateElicitationRequestUrl) -> s.CreateElicitationResponse:
        pending = _Pending(request)
        view = {
            "mode": "url",
            "message": request.message,
            "source": scope_label(request),
            "url": request.url,
            "openable": openable(request.url),
        }
        await self._wait(pending, view)
        if pending.action == "accept":
            if not pending.completed:
                self._accepted_urls[request.elicitation_id] = request.message
            return s.CreateElicitationResponseAccept()
        if pending.action == "decline":
            return s.CreateElicitationResponseDecline()
        return s.CreateElicitationResponseCancel()

    def complete(self, elicitation_id: str) -> None:
        """`elicitation/complete`: closes the matching URL elicitation; unknown or done ids are ignored."""
        message = self._accepted_urls.pop(elicitation_id, None)
        for scope, pending in list(self._open.values()):
            request = pending.request
            if (
                isinstance(request, s.CreateElicitationRequestUrl)
                and request.elicitation_id == elicitation_id
            ):
                if not scope.cancel_called:
                    # The user finished it some other way: accepted, and the picker closed by the port.
                    pending.completed = True
                    pending.action = "accept"
                    scope.cancel()
                message = request.message
        if message is None:
            log.debug("elicitation/complete for unknown or completed id %r ignored", elicitation_id)
            return
        self._editor.notify(f"acp.nvim: done: {message}", INFO)
