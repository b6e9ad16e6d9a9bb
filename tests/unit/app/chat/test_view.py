"""The chat's layout as the view decides it (no Neovim): who speaks where, blank lines, folds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_nvim.app.chat.view import SLICE_LINES, meta_op
from acp_nvim.client.session.state import SessionState
from acp_nvim.client.session.transcript import MessageItem
from acp_nvim.protocol import schema as s
from tests.unit.client.session.test_state import chunk, ops_for, update

ROOT = Path(__file__).resolve().parents[4]

READ = {
    "sessionUpdate": "tool_call",
    "toolCallId": "r1",
    "title": "Read a",
    "kind": "read",
    "status": "completed",
}


def text_of(line: dict[str, Any]) -> str:
    if "s" in line:
        return "".join(segment[0] for segment in line["s"])
    return str(line)


class Chat:
    """The chat's lines as Lua would draw them from the ops (blank separators and `tight` included)."""

    def __init__(self) -> None:
        self.items: dict[str, list[str]] = {}
        self.tight: set[str] = set()
        self.notes: dict[str, int] = {}

    def take(self, state: SessionState) -> list[dict[str, Any]]:
        ops = ops_for(state, state.take_changes(), "Agent")
        for op in ops:
            if op["op"] in ("add", "replace"):
                item = op["item"]
                self.items[item["id"]] = [text_of(line) for line in item["lines"]]
                if item.get("tight"):
                    self.tight.add(item["id"])
            elif op["op"] == "append":
                lines = self.items[op["id"]]
                parts = op["text"].split("\n")
                lines[-1] += parts[0]
                lines.extend(parts[1:])
            elif op["op"] == "note":
                # The note after the item's lines the first time, in place after that; the tail after it.
                lines = self.items[op["id"]]
                at = self.notes.setdefault(op["id"], len(lines))
                lines[at:] = [op["text"], *op["tail"].split("\n")]
        return ops

    def lines(self) -> list[str]:
        out: list[str] = []
        for key, lines in self.items.items():
            if out and key not in self.tight:
                out.append("")
            out.extend(lines)
        return out


def test_one_header_per_reply_whatever_it_holds() -> None:
    state, chat = SessionState("s"), Chat()
    state.add_user_prompt("go")
    state.apply(chunk("thinking", kind="agent_thought_chunk"))
    state.apply(chunk("Let me look."))
    state.apply(
        update(
            {"sessionUpdate": "plan", "entries": [{"content": "a", "priority": "low", "status": "pending"}]}
        )
    )
    state.apply(update(READ))
    state.apply(update(READ | {"toolCallId": "r2", "title": "Read b"}))
    state.add_notice("Mode: Code")
    state.apply(chunk("Found it."))
    chat.take(state)
    assert chat.lines() == [
        "▍ You",
        "go",
        "",
        "▍ Agent",
        "  Thinking",
        "thinking",
        "",
        "Let me look.",
        "",
        "  Plan",
        "  [ ] a",
        "",
        "  ✓ Read a  read  completed",
        "  ✓ Read b  read  completed",  # a run of tool calls is a list
        "",
        "  Mode: Code",
        "",
        "Found it.",  # a notice does not end the reply
    ]
    # The next prompt starts a turn, the agent's answer a reply of its own; the commands block interrupts one.
    state.add_user_prompt("again")
    state.apply(chunk("Sure."))
    state.apply(update({"sessionUpdate": "available_commands_update", "availableCommands": []}))
    state.apply(update(READ | {"toolCallId": "r3"}))
    chat.take(state)
    assert chat.lines()[-11:] == [
        "",
        "▍ You",
        "again",
        "",
        "▍ Agent",
        "Sure.",
        "",
        "▍ Commands",
        "",
        "▍ Agent",
        "  ✓ Read a  read  completed",
    ]
    assert chat.lines().count("▍ Agent") == 3


def test_blank_lines_a_message_starts_or_ends_with_are_held_back_until_text_follows() -> None:
    state, chat = SessionState("s"), Chat()
    state.apply(chunk("\n\nHello"))
    chat.take(state)
    state.apply(chunk(" there\n"))
    state.apply(chunk("\n"))
    ops = chat.take(state)
    assert [op["text"] for op in ops] == [" there"]
    assert chat.lines() == ["▍ Agent", "Hello there"]
    state.apply(chunk("Second paragraph.\n\n"))  # the two held back newlines come before it
    chat.take(state)
    assert chat.lines() == ["▍ Agent", "Hello there", "", "Second paragraph."]
    state.apply(update(READ))
    chat.take(state)
    assert chat.lines()[-3:] == ["Second paragraph.", "", "  ✓ Read a  read  completed"]


def test_a_tool_call_asking_permission_shows_its_details_and_folds_them_once_answered() -> None:
    diff = {"type": "diff", "path": "/p/a", "oldText": "a\n", "newText": "b\n"}
    edit = {
        "sessionUpdate": "tool_call",
        "toolCallId": "e1",
        "title": "Edit a",
        "kind": "edit",
        "content": [diff],
    }
    state = SessionState("s")
    state.apply(update(edit))
    item = state.tool_call("e1")
    assert item is not None
    state.take_changes()

    def folds() -> list[str | None]:
        (op,) = ops_for(state, state.take_changes(), "Agent")
        return [line.get("f") for line in op["item"]["lines"]]

    item.awaiting_permission = True
    state.apply(update({"sessionUpdate": "tool_call_update", "toolCallId": "e1"}))
    assert folds() == [None, None, None]  # header, summary, diff: all in view
    item.awaiting_permission = False
    state.apply(update({"sessionUpdate": "tool_call_update", "toolCallId": "e1", "status": "completed"}))
    assert folds() == [None, ">1", "1"]


@given(
    st.lists(st.sampled_from(["a", "\n", "b\n", "\n\n", ""]), max_size=12), st.integers(0, 12), st.booleans()
)
def test_newlines_before_the_last_characters_of_a_message(pieces: list[str], cut: int, joined: bool) -> None:
    item = MessageItem("1", "agent", None)
    for piece in pieces:
        item.append(piece)
    if joined:
        assert item.text == "".join(pieces)  # reading the text joins its pieces
    text = "".join(pieces)
    cut = min(cut, len(text))
    before = text[: len(text) - cut]
    expected = len(before) - len(before.rstrip("\n"))
    assert item.newlines_before(cut) == expected
    # Told how many of the last pieces those characters are (a frame's appends), when they are.
    last = next((n for n in range(len(pieces) + 1) if sum(map(len, pieces[len(pieces) - n :])) == cut), 0)
    assert item.newlines_before(cut, last) == expected


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_no_op_holds_more_than_a_thousand_lines_and_the_lines_are_the_text(streamed: bool) -> None:
    # Neovim's cost of a change is per line too: 8,000 quoted lines in one op held it ~20 ms.
    state, chat = SessionState("s"), Chat()
    text = "\n".join(f"> {n}" for n in range(3500))
    if streamed:
        state.apply(chunk("> start\n"))
        chat.take(state)
    state.apply(chunk(text))
    ops = chat.take(state)
    for op in ops:
        drawn = op["item"]["lines"] if op["op"] == "add" else op["text"].split("\n")
        assert len(drawn) <= SLICE_LINES + 2, op["op"]
    assert len(ops) >= 4
    assert chat.lines()[-3500:] == text.split("\n")


def test_a_cut_message_with_many_lines_shows_its_beginning_the_note_and_its_end() -> None:
    state, chat = SessionState("s"), Chat()
    lines = [f"> line {n}" for n in range(300_000)]
    state.apply(chunk("\n".join(lines)))
    ops = chat.take(state)
    assert all(len(op.get("tail", op.get("text", "")).split("\n")) <= SLICE_LINES + 1 for op in ops)
    shown = chat.lines()
    note = next(n for n, line in enumerate(shown) if line.endswith("cut here"))
    # The header, the beginning (cut within its last line), the note, then whole lines to the end.
    assert shown[0] == "▍ Agent" and shown[1 : note - 1] == lines[: note - 2]
    assert lines[note - 2].startswith(shown[note - 1])
    assert shown[note + 1 :] == lines[-(len(shown) - note - 1) :]


# The shape of an agent's config options has one owner, the host: the meta op carries, for each option, the
# words `:AcpConfig` accepts for it (as `app/sessions/modes.py` parses them); Lua completes from them and
# reads no protocol option.


def test_the_meta_op_sends_each_option_with_the_words_it_accepts() -> None:
    state = SessionState("s1")
    model = s.SessionConfigOptionSelect(
        id="model",
        name="Model",
        current_value="a",
        options=[
            s.SessionConfigSelectGroup(
                group="one", name="One", options=[s.SessionConfigSelectOption(value="a", name="A")]
            ),
            s.SessionConfigSelectGroup(
                group="more",
                name="More",
                options=[
                    s.SessionConfigSelectOption(value="b", name="B"),
                    s.SessionConfigSelectOption(value="c", name="C"),
                ],
            ),
        ],
    )
    brief = s.SessionConfigOptionBoolean(id="brief", name="Brief", current_value=False)
    state.apply(s.SessionUpdateConfigOptionUpdate(config_options=[model, brief]))
    config = meta_op(state, "agent").config
    assert [(option.id, option.values) for option in config] == [
        ("model", ["a", "b", "c"]),
        ("brief", ["true", "false", "toggle"]),
    ]


def test_lua_reads_no_protocol_option() -> None:
    commands = (ROOT / "lua" / "acp_nvim" / "ui" / "session_commands.lua").read_text(encoding="utf-8")
    assert [word for word in ("option.options", "option.type", "entry.group") if word in commands] == []


def test_a_compaction_is_one_line_with_its_summary_folded_under_it() -> None:
    from acp_nvim.app.chat.view import compaction_view
    from acp_nvim.client.session.transcript import CompactionItem

    running = CompactionItem(key="1", compaction_id="c")
    assert compaction_view(running) == [{"s": [["  ↻ compacting context…", "AcpChatNotice"]]}]
    done = CompactionItem(key="1", compaction_id="c", status="completed", summary="Line one\nLine two\n")
    assert compaction_view(done) == [
        {"s": [["  ↻ context compacted", "AcpChatNotice"]], "f": ">1"},
        {"s": [["    Line one", ""]], "f": "1"},
        {"s": [["    Line two", ""]], "f": "1"},
    ]
    failed = CompactionItem(key="1", compaction_id="c", status="failed", error="too long")
    assert compaction_view(failed) == [{"s": [["  ↻ context compaction failed: too long", "AcpChatWarning"]]}]
