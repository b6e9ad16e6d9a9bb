"""The prompts a user sends while the agent works: queued per session, shown under the chat (not part of the
transcript), edited, dropped and reordered by `:AcpQueue`, sent in order as turns end (`turns.py` decides
when) or, where the agent offers it, steered into the running turn.

Lua sends an action and the id of the queued prompt the user saw at the position typed; an id no longer
queued (it was sent meanwhile) is named, never guessed at.
"""

from __future__ import annotations

from acp_nvim.app.port import INFO, WARN, NeovimPort
from acp_nvim.app.runs import ChatSession, Opening, QueuedPrompt
from acp_nvim.app.views import QueueView
from acp_nvim.jsonrpc.wire import JsonValue

# How much of a queued prompt's first line the chat shows.
SHOWN_CHARS = 80

ACTIONS = ("list", "edit", "drop", "up", "down", "clear", "send", "steer")
GONE = "that prompt is no longer queued (it was sent, or dropped)"
EMPTY = "no prompt is queued"
WAITING = "the session being opened is not open yet: the prompt goes to it once it is"
NOT_OPENED = (
    "the prompt was not sent: the session it waited for did not open (its text is back in the chat's prompt,"
    " or in its history)"
)
# A prompt for no session (or one not open yet) while its agent starts, and no session it could wait for.
AGENT_STARTING = (
    "the agent is starting: the prompt was not sent (its text is back in the chat's prompt,"
    " or in its history)"
)


def _summary(prompt: QueuedPrompt) -> str:
    """The prompt on one line (its line breaks shown), cut at SHOWN_CHARS."""
    text = prompt.shown.replace("\n", " ↵ ")
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def queue_view(session: ChatSession, steerable: bool) -> QueueView:
    queue = session.queue
    if not queue:
        return QueueView(lines=[], ids=[], texts=[], steer=False)
    steer = steerable and session.in_turn
    when = "sent when the turn ends" if session.in_turn else "held: :AcpQueue send sends the next"
    hint = "; :AcpQueue steer sends one into the running turn" if steer else ""
    lines = [[(f"Queued ({when}{hint}):", "AcpChatQueueHeader")]]
    lines += [[(f"  {n}. {_summary(prompt)}", "AcpChatQueued")] for n, prompt in enumerate(queue, 1)]
    ids = [prompt.id for prompt in queue]
    return QueueView(lines=lines, ids=ids, texts=[prompt.text for prompt in queue], steer=steer)


class PromptQueue:
    def __init__(self, port: NeovimPort) -> None:
        self._port = port
        self._next_id = 0

    def show(self, session: ChatSession, steerable: bool) -> None:
        self._port.show_queue(session.session_id, queue_view(session, steerable))

    def add(self, session: ChatSession, text: str, attachments: list[JsonValue], shown: str) -> None:
        self._next_id += 1
        session.queue.append(QueuedPrompt(id=self._next_id, text=text, attachments=attachments, shown=shown))

    def wait(self, opening: Opening, text: str, attachments: list[JsonValue]) -> None:
        """A prompt for the session being opened: it waits for it (built when it goes, in that session)."""
        self._next_id += 1
        opening.waiting.append(QueuedPrompt(id=self._next_id, text=text, attachments=attachments, shown=text))
        self._port.notify(WAITING, INFO)

    def give_back(self, opening: Opening) -> None:
        """The session did not open: what waited for it goes back to the user, as a refused prompt does (the
        texts, in order, in the prompt; the attachments in the next prompt's)."""
        if opening.waiting:
            text = "\n\n".join(prompt.text for prompt in opening.waiting if prompt.text)
            attachments = [item for prompt in opening.waiting for item in prompt.attachments]
            self._port.prompt_refused(NOT_OPENED, text, attachments)
            opening.waiting.clear()

    def find(self, session: ChatSession, prompt_id: int | None) -> QueuedPrompt | None:
        """The queued prompt of that id (None: the next to go); None, and the user told, when none is."""
        queue = session.queue
        if not queue:
            self._port.notify(EMPTY, WARN)
            return None
        if prompt_id is None:
            return queue[0]
        for prompt in queue:
            if prompt.id == prompt_id:
                return prompt
        self._port.notify(GONE, WARN)
        return None

    def edit(self, session: ChatSession, prompt: QueuedPrompt, text: str, mentions: list[JsonValue]) -> None:
        """The prompt's new text; the files and media it mentions are those of the new text, what was attached
        to it otherwise stays."""
        kept = [a for a in prompt.attachments if not (isinstance(a, dict) and a.get("mention"))]
        prompt.text = text
        prompt.attachments = [*kept, *mentions]

    def move(self, session: ChatSession, prompt: QueuedPrompt, by: int) -> None:
        queue = session.queue
        at = queue.index(prompt)
        to = min(max(at + by, 0), len(queue) - 1)
        queue.insert(to, queue.pop(at))

    def drop(self, session: ChatSession, prompt: QueuedPrompt) -> None:
        session.queue.remove(prompt)

    def clear(self, session: ChatSession) -> None:
        session.queue.clear()

    def list(self, session: ChatSession) -> None:
        if not session.queue:
            self._port.notify(EMPTY, INFO)
            return
        lines = [f"{n}. {prompt.shown}" for n, prompt in enumerate(session.queue, 1)]
        self._port.notify("queued prompts:\n" + "\n".join(lines), INFO)
