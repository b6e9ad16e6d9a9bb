"""Commands the agent runs itself, as the chat shows them: the command, its output as it grows, its exit.

Agents that do not use the client's `terminal/*` report a command as a tool call of kind `execute`, in one of
two shapes:
- the command in `rawInput` (`command`: a string, or an argv list) and the output so far as the text content,
  sent whole again on every update (codex-acp wraps it in a ``` fence; claude-agent-acp and others send it
  bare);
- Zed's display-only terminal, which codex-acp and claude-agent-acp send to clients that advertise
  `_meta.terminal_output`: a `terminal` content whose id `_meta.terminal_info.terminal_id` names, then the
  output in `_meta.terminal_output {terminal_id, data}`, and `_meta.terminal_exit {terminal_id, exit_code,
  signal}`. codex-acp sends each new piece as `terminal_output`; claude-agent-acp, to a client that also
  advertises `_meta.terminal_output_delta`, sends pieces as `terminal_output_delta` and a `terminal_output`
  only to replace the whole output.
`ShellRun.take` turns either into what is new since the last time: an output resent whole costs only its new
bytes, and an output that grows past what the chat shows (its last lines) sends only its tail.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

import msgspec

from acp_nvim.protocol import schema as s

# The client capabilities (`clientCapabilities._meta`) that ask for the display-only terminal shape, with
# pieces of output marked as such.
TERMINAL_OUTPUT_META = "terminal_output"
TERMINAL_OUTPUT_DELTA_META = "terminal_output_delta"
# The chat shows the last lines of an output (chat.terminal_lines, each cut to 4 KiB); up to this much new
# output at once crosses to Neovim as it is (each byte once), more is sent as a fresh start with its tail, so
# that a 100 MB output costs Neovim what 1 MiB does.
OUTPUT_TAIL_CHARS = 1024 * 1024
# Argv shapes that only wrap a script: the script is what the user wants to read.
_SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "fish", "/bin/sh", "/bin/bash", "/usr/bin/bash", "/bin/zsh"}
)
_SCRIPT_FLAGS = frozenset({"-c", "-lc", "-ic", "-lic"})


class OutputChange(msgspec.Struct):
    """Output to add to what the chat shows; `reset`: it replaces what is shown instead."""

    text: str
    reset: bool = False


class ExitStatus(msgspec.Struct):
    exit_code: int | None = None
    signal: str | None = None


class ShellRun:
    """One command's display state: what the chat was sent of its output, and how it ended."""

    __slots__ = ("_whole", "command", "deltas", "exit", "sent", "terminal_id")

    def __init__(self, command: str) -> None:
        self.command = command
        # Codex's display-only terminal: output arrives as pieces, not whole.
        self.terminal_id: str | None = None
        # The agent marks pieces as `terminal_output_delta`: its `terminal_output` then replaces the output.
        self.deltas = False
        # The last output sent whole (compared with the next one), and how many characters of output the
        # chat has been sent in all.
        self._whole = ""
        self.sent = 0
        self.exit: ExitStatus | None = None

    def whole_output(self, text: str) -> OutputChange | None:
        """The output so far, sent whole by the agent: what the chat lacks of it."""
        old = self._whole
        self._whole = text
        if text == old:
            return None
        if len(text) > len(old) and text.startswith(old):
            return self._grown(text[len(old) :], text)
        # Rewritten (not an extension of what was shown): shown afresh.
        self.sent = len(text)
        return OutputChange(_tail(text), reset=True)

    def piece(self, data: str) -> OutputChange | None:
        """A piece of output that follows what came before (the display-only terminal)."""
        if not data:
            return None
        return self._grown(data, None)

    def terminal_output(self, output: TerminalOutput) -> OutputChange | None:
        """What `_meta` says of the display-only terminal's output (see the module's docstring)."""
        if output.delta is not None:
            self.deltas = True
            return self.piece(output.delta)
        if output.data is None:
            return None
        if not self.deltas:
            return self.piece(output.data)
        self.sent = len(output.data)
        return OutputChange(_tail(output.data), reset=True)

    def _grown(self, new: str, whole: str | None) -> OutputChange:
        self.sent += len(new)
        if len(new) <= OUTPUT_TAIL_CHARS:
            return OutputChange(new)
        return OutputChange(_tail(whole if whole is not None else new), reset=True)


def _tail(text: str) -> str:
    return text if len(text) <= OUTPUT_TAIL_CHARS else text[-OUTPUT_TAIL_CHARS:]


def command_of(raw_input: object) -> str | None:
    """The command line a tool call's `rawInput` names, if any (`command`, or `cmd`: a string or argv)."""
    if not isinstance(raw_input, dict):
        return None
    command = raw_input.get("command", raw_input.get("cmd"))
    if isinstance(command, str):
        return command.strip() or None
    if isinstance(command, list) and command and all(isinstance(part, str) for part in command):
        if len(command) == 3 and command[0] in _SHELLS and command[1] in _SCRIPT_FLAGS:
            script: str = command[2]
            return script
        return shlex.join(command)
    return None


def output_of(content: Sequence[s.ToolCallContent]) -> str | None:
    """The output a tool call's text content holds (None when it has none), without a ``` fence around it."""
    texts = [
        block.content.text
        for block in content
        if isinstance(block, s.ToolCallContentContent) and isinstance(block.content, s.ContentBlockText)
    ]
    if not texts:
        return None
    return _unfenced("".join(texts))


def _unfenced(text: str) -> str:
    if not text.startswith("```"):
        return text
    start = text.find("\n")
    body = text[start + 1 :] if start >= 0 else ""
    stripped = body.rstrip("\n")
    if stripped.endswith("```"):
        # The fence is moved down on every update: without it, the output before is a prefix of the next.
        return stripped[:-3].rstrip("\n")
    return body


def embeds_acp_terminal(content: Sequence[s.ToolCallContent], display_terminal_id: str | None) -> bool:
    """Whether the tool call shows a terminal of the client's (`terminal/*`), not the agent's display-only
    one."""
    return any(
        isinstance(block, s.ToolCallContentTerminal) and block.terminal_id != display_terminal_id
        for block in content
    )


def exit_of(raw_output: object) -> ExitStatus | None:
    """An exit code a tool call's `rawOutput` reports (`exit_code`, `exitCode` or `code`)."""
    if not isinstance(raw_output, dict):
        return None
    for key in ("exit_code", "exitCode", "code"):
        code = raw_output.get(key)
        if isinstance(code, int) and not isinstance(code, bool):
            return ExitStatus(exit_code=code)
    return None


class TerminalOutput(msgspec.Struct):
    """The output a tool call's `_meta` carries: `data` (its `terminal_output`), `delta` (its
    `terminal_output_delta`)."""

    data: str | None = None
    delta: str | None = None


def meta_terminal(
    meta: dict[str, object] | None,
) -> tuple[str | None, TerminalOutput | None, ExitStatus | None]:
    """From a tool call's `_meta`: the display-only terminal it announces, the output it carries and the exit
    it reports (each None when absent; an exit without code nor signal says nothing the status does not)."""
    if not meta:
        return None, None, None
    terminal_id: str | None = None
    info = meta.get("terminal_info")
    if isinstance(info, dict) and isinstance(info.get("terminal_id"), str):
        terminal_id = info["terminal_id"]
    output = TerminalOutput(
        data=_data(meta.get("terminal_output")), delta=_data(meta.get("terminal_output_delta"))
    )
    status: ExitStatus | None = None
    ended = meta.get("terminal_exit")
    if isinstance(ended, dict):
        code, signal = ended.get("exit_code"), ended.get("signal")
        status = ExitStatus(
            exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
            signal=signal if isinstance(signal, str) else None,
        )
        if status.exit_code is None and status.signal is None:
            status = None
    has_output = output.data is not None or output.delta is not None
    return terminal_id, output if has_output else None, status


def _data(output: object) -> str | None:
    if isinstance(output, dict) and isinstance(output.get("data"), str):
        data: str = output["data"]
        return data
    return None
