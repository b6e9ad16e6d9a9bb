"""An in-memory editor for the editor services (an `EditorPort`): buffers are a dict, terminals a dict of
scripted streams, and each question waits for the answer the test gives. The services run on it exactly as on
Neovim's, with no Neovim."""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from acp_nvim.app.editor import port as p
from acp_nvim.app.views import PermissionView


class Question:
    """One question on screen: what was asked and the answer the test gives (a late one is dropped)."""

    def __init__(self, kind: str, view: object) -> None:
        self.kind = kind
        self.view = view
        self.answer: object = None
        self.closed = False
        self._answered = anyio.Event()

    def give(self, answer: object) -> None:
        if not self._answered.is_set():
            self.answer = answer
            self._answered.set()

    async def wait(self) -> object:
        await self._answered.wait()
        return self.answer


class FakeEditorPort:
    def __init__(self) -> None:
        self._pickers = anyio.Lock()
        self.buffers: dict[str, str] = {}
        # A fact the next write reports instead of writing ("changed_on_disk", ...).
        self.write_fact: str | None = None
        self.writes: list[tuple[str, str, p.FsWriteOptions]] = []
        self.reads: list[str] = []
        self.notified: list[tuple[str, int]] = []
        self.written_by_host: list[str] = []
        self.shown: list[tuple[str, int | None, int | None]] = []
        self.forgotten: list[str] = []
        self.specs: list[p.TerminalSpec] = []
        self.streams: dict[str, bytes] = {}
        self.exits: dict[str, p.TerminalExit] = {}
        self.killed: list[str] = []
        self.released: list[str] = []
        self.questions: list[Question] = []

    @property
    def pickers(self) -> anyio.Lock:
        return self._pickers

    def notify(self, message: str, level: int) -> None:
        self.notified.append((message, level))

    async def read_buffer(
        self, path: str, line: int | None, limit: int | None, options: p.FsReadOptions
    ) -> p.FsReadAnswer:
        self.reads.append(path)
        if path not in self.buffers:
            return p.FsReadAnswer(ok=True, no_buffer=True)
        return p.FsReadAnswer(ok=True, content=self.buffers[path], from_buffer=True)

    async def write_buffer(self, path: str, content: str, options: p.FsWriteOptions) -> p.FsWriteAnswer:
        self.writes.append((path, content, options))
        if self.write_fact is not None:
            return p.FsWriteAnswer(ok=False, fact=self.write_fact)
        self.buffers[path] = content
        return p.FsWriteAnswer(ok=True, bufnr=1)

    async def find_buffer(self, path: str) -> int | None:
        return 1 if path in self.buffers else None

    def file_written(self, path: str) -> None:
        self.written_by_host.append(path)

    def forget_views(self, session_id: str) -> None:
        self.forgotten.append(session_id)

    def show_where(self, path: str, line: int | None, bufnr: int | None) -> None:
        self.shown.append((path, line, bufnr))

    async def terminal_create(self, spec: p.TerminalSpec) -> p.TerminalCreated:
        self.specs.append(spec)
        terminal_id = f"term-{len(self.specs)}"
        self.streams[terminal_id] = b""
        return p.TerminalCreated(ok=True, terminal_id=terminal_id)

    async def terminal_output(self, terminal_id: str, known_total: int) -> p.TerminalOutput:
        stream = self.streams.get(terminal_id)
        if stream is None:
            return p.TerminalOutput(ok=False, fact="unknown_terminal")
        limit = self.specs[int(terminal_id.split("-")[1]) - 1].output_byte_limit or len(stream)
        kept_from = max(len(stream) - limit, 0)
        start = known_total if kept_from <= known_total <= len(stream) else kept_from
        text = stream[start:].decode("utf-8", "surrogateescape")
        status = self.exits.get(terminal_id)
        return p.TerminalOutput(
            ok=True, output=text, from_=start, total=len(stream), limit=limit, exit_status=status
        )

    async def terminal_wait(self, terminal_id: str) -> p.TerminalWait:
        return p.TerminalWait(ok=True, exit_status=self.exits.get(terminal_id, p.TerminalExit(exit_code=0)))

    async def terminal_kill(self, terminal_id: str) -> p.TerminalDone:
        self.killed.append(terminal_id)
        return p.TerminalDone(ok=True)

    async def terminal_release(self, terminal_id: str) -> p.TerminalDone:
        self.released.append(terminal_id)
        return p.TerminalDone(ok=True)

    def terminal_kill_many(self, terminal_ids: Sequence[str]) -> None:
        self.killed.extend(terminal_ids)

    async def _ask(self, kind: str, view: object) -> object:
        question = Question(kind, view)
        self.questions.append(question)
        try:
            return await question.wait()
        finally:
            question.closed = True

    async def ask_sandbox(self, question: p.SandboxQuestion) -> str | None:
        answer = await self._ask("sandbox", question)
        return answer if isinstance(answer, str) else None

    async def ask_permission(self, view: PermissionView) -> str | None:
        answer = await self._ask("permission", view)
        return answer if isinstance(answer, str) else None

    async def ask_elicitation(self, view: dict[str, object]) -> p.ElicitationAnswer:
        answer = await self._ask("elicitation", view)
        return answer if isinstance(answer, p.ElicitationAnswer) else p.ElicitationAnswer()

    async def asked(self, count: int) -> Question:
        """The `count`th question (1-based), once it is on screen."""
        with anyio.fail_after(5):
            while len(self.questions) < count:
                await anyio.sleep(0.001)
        return self.questions[count - 1]
