"""The session reducer: updates in, transcript + minimal changes out (no Neovim)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_nvim.app.chat import view as chat_view
from acp_nvim.app.chat.line_breaks import LineBreaker, broken
from acp_nvim.app.editor.permission import PermissionBroker, dismissed_outcome
from acp_nvim.app.views import PermissionView
from acp_nvim.client.session.message_cut import HEAD_CHARS, TAIL_CHARS
from acp_nvim.client.session.state import SessionState
from acp_nvim.client.session.tool_calls import KEEP_TOOL_DETAILS
from acp_nvim.client.session.transcript import Changes, Item, MessageItem, NoticeItem, PlanItem, ToolCallItem
from acp_nvim.nvim.bridge import FRAME_SECONDS
from acp_nvim.nvim.editor import NvimEditorPort
from acp_nvim.nvim.lua_api import LuaApi
from acp_nvim.nvim.render import ChatRenderer
from acp_nvim.nvim.ui import Ui
from acp_nvim.protocol import codec
from acp_nvim.protocol import schema as s


def ops_for(
    state: SessionState, changes: Changes, agent_name: str, breaks: dict[str, LineBreaker] | None = None
) -> list[dict[str, Any]]:
    """`chat_view.ops_for` as Lua reads it: the JSON the renderer sends, decoded."""
    wire: list[dict[str, Any]] = msgspec.json.decode(
        msgspec.json.encode(chat_view.ops_for(state, changes, agent_name, breaks))
    )
    return wire


def item_view(item: Item, agent_name: str) -> dict[str, Any]:
    """`chat_view.item_view` as Lua reads it."""
    wire: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(chat_view.item_view(item, agent_name)))
    return wire


def update(raw: dict[str, Any]) -> s.SessionUpdate:
    notification = codec.decode_session_update(
        msgspec.Raw(msgspec.json.encode({"sessionId": "s", "update": raw}))
    )
    assert notification is not None
    return notification.update


def chunk(text: str, kind: str = "agent_message_chunk", message_id: str | None = None) -> s.SessionUpdate:
    raw: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        raw["messageId"] = message_id
    return update(raw)


def test_chunks_stream_into_one_message_and_are_reported_as_appends() -> None:
    state = SessionState("s")
    state.apply(chunk("Hel"))
    first = state.take_changes()
    assert first.added == ["1"] and not first.appended
    state.apply(chunk("lo "))
    state.apply(chunk("world"))
    changes = state.take_changes()
    assert changes.added == [] and changes.appended == {"1": ["lo ", "world"]}
    item = state.items[0]
    assert isinstance(item, MessageItem) and item.text == "Hello world"


def test_a_new_message_id_starts_a_new_message_and_an_old_id_appends_in_place() -> None:
    state = SessionState("s")
    state.apply(chunk("one", message_id="m1"))
    state.apply(chunk("two", message_id="m2"))
    state.apply(chunk(" more", message_id="m1"))
    texts = [item.text for item in state.items if isinstance(item, MessageItem)]
    assert texts == ["one more", "two"]


def test_roles_and_items_in_between_split_messages() -> None:
    state = SessionState("s")
    state.apply(chunk("thinking", "agent_thought_chunk"))
    state.apply(chunk("answer"))
    state.apply(update({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Read"}))
    state.apply(chunk("after"))
    kinds = [(type(item).__name__, getattr(item, "role", None)) for item in state.items]
    assert kinds == [
        ("MessageItem", "thought"),
        ("MessageItem", "agent"),
        ("ToolCallItem", None),
        ("MessageItem", "agent"),
    ]


def test_a_local_prompt_is_never_extended_by_agent_chunks() -> None:
    state = SessionState("s")
    state.add_user_prompt("hi")
    state.apply(chunk("hi", "user_message_chunk"))
    assert [item.text for item in state.items if isinstance(item, MessageItem)] == ["hi", "hi"]


def test_tool_call_updates_replace_fields_and_collections() -> None:
    state = SessionState("s")
    state.apply(
        update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t",
                "title": "Edit",
                "kind": "edit",
                "locations": [{"path": "/a"}],
                "content": [{"type": "diff", "path": "/a", "oldText": "x", "newText": "y"}],
            }
        )
    )
    state.take_changes()
    state.apply(update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "in_progress"}))
    state.apply(update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "content": []}))
    changes = state.take_changes()
    assert changes.replaced == ["1"]  # two updates in a frame, one replacement
    item = state.tool_call("t")
    assert item is not None
    assert (item.status, item.kind, item.content, [loc.path for loc in item.locations]) == (
        "in_progress",
        "edit",
        (),
        ["/a"],
    )


def test_an_update_for_an_unknown_tool_call_creates_it() -> None:
    state = SessionState("s")
    state.apply(update({"sessionUpdate": "tool_call_update", "toolCallId": "ghost", "status": "completed"}))
    item = state.items[0]
    assert isinstance(item, ToolCallItem) and item.title == "ghost" and item.status == "completed"


def test_plan_is_replaced_within_a_turn_and_new_per_turn() -> None:
    state = SessionState("s")
    entry = {"content": "a", "priority": "high", "status": "pending"}
    state.apply(update({"sessionUpdate": "plan", "entries": [entry]}))
    state.apply(update({"sessionUpdate": "plan", "entries": [entry | {"status": "completed"}, entry]}))
    plans = [item for item in state.items if isinstance(item, PlanItem)]
    assert len(plans) == 1 and [e.status for e in plans[0].entries] == ["completed", "pending"]
    state.begin_turn()
    state.apply(update({"sessionUpdate": "plan", "entries": [entry]}))
    assert len([item for item in state.items if isinstance(item, PlanItem)]) == 2


def test_cancel_marks_unfinished_tool_calls_and_late_updates_still_apply() -> None:
    state = SessionState("s")
    state.apply(
        update({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "A", "status": "completed"})
    )
    state.apply(
        update({"sessionUpdate": "tool_call", "toolCallId": "b", "title": "B", "status": "in_progress"})
    )
    state.end_turn("cancelled")
    statuses = {item.tool_call_id: item.status for item in state.items if isinstance(item, ToolCallItem)}
    assert statuses == {"a": "completed", "b": "cancelled"}
    assert state.items[-1].text == "Turn ended: cancelled"  # type: ignore[union-attr]
    state.apply(update({"sessionUpdate": "tool_call_update", "toolCallId": "b", "status": "completed"}))
    assert state.tool_call("b").status == "completed"  # type: ignore[union-attr]


def test_end_turn_is_silent_for_end_turn() -> None:
    state = SessionState("s")
    state.end_turn("end_turn")
    assert state.items == []


def test_meta_updates() -> None:
    state = SessionState("s")
    state.set_modes(
        s.SessionModeState(
            current_mode_id="ask",
            available_modes=[s.SessionMode(id="ask", name="Ask"), s.SessionMode(id="code", name="Code")],
        )
    )
    state.take_changes()
    state.apply(update({"sessionUpdate": "current_mode_update", "currentModeId": "code"}))
    state.apply(update({"sessionUpdate": "session_info_update", "title": "Fixing bugs"}))
    state.apply(update({"sessionUpdate": "usage_update", "used": 1200, "size": 200000}))
    state.apply(
        update(
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [{"name": "plan", "description": "Make a plan"}],
            }
        )
    )
    changes = state.take_changes()
    assert changes.meta == {"mode", "title", "usage", "commands"}
    assert state.current_mode_name == "Code" and state.title == "Fixing bugs"
    assert state.usage is not None and state.usage.used == 1200
    ops = ops_for(state, changes, "Agent")
    meta = ops[-1]
    assert meta["op"] == "meta"
    assert meta["header"] == "Fixing bugs │ mode: Code │ ctx 1.2k/200.0k"
    assert meta["commands"] == [{"word": "/plan", "menu": "Make a plan", "hint": ""}]
    notices = [op["item"]["lines"] for op in ops if op["op"] == "add" and op["item"]["kind"] == "notice"]
    assert notices == [[{"s": [["  Mode: Code", "AcpChatNotice"]]}]]


def test_session_info_null_clears_and_omitted_keeps() -> None:
    state = SessionState("s")
    state.apply(update({"sessionUpdate": "session_info_update", "title": "T"}))
    state.apply(update({"sessionUpdate": "session_info_update", "updatedAt": "2025-01-01T00:00:00Z"}))
    assert state.title == "T"
    state.apply(update({"sessionUpdate": "session_info_update", "title": None}))
    assert state.title is None


def test_config_option_change_is_announced() -> None:
    state = SessionState("s")
    option = {
        "id": "model",
        "name": "Model",
        "type": "select",
        "category": "model",
        "currentValue": "a",
        "options": [{"value": "a", "name": "Alpha"}, {"value": "b", "name": "Beta"}],
    }
    state.apply(update({"sessionUpdate": "config_option_update", "configOptions": [option]}))
    state.apply(
        update({"sessionUpdate": "config_option_update", "configOptions": [option | {"currentValue": "b"}]})
    )
    assert [getattr(item, "text", None) for item in state.items] == ["Model: Beta"]


def test_diff_and_terminal_content_become_view_lines() -> None:
    state = SessionState("s")
    state.apply(
        update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t",
                "title": "Edit",
                "content": [
                    {"type": "diff", "path": "/p/a.py", "newText": "new\n"},
                    {"type": "terminal", "terminalId": "term-1"},
                ],
            }
        )
    )
    (op,) = ops_for(state, state.take_changes(), "A")
    lines = op["item"]["lines"]
    # Under the reply's header and the call's summary line, the details: a fold ("f", see app/chat/view.py).
    assert lines[0] == {"s": [["▍ A", "AcpChatAgent"]]}
    assert lines[1]["f"] == ">1"
    assert lines[2] == {"diff": {"path": "/p/a.py", "old": None, "new": "new\n"}, "f": "1"}
    assert lines[3] == {"term": "term-1", "f": "1"}


@given(st.lists(st.text(max_size=20), min_size=1, max_size=50), st.integers(min_value=1, max_value=10))
def test_appends_replayed_in_any_frame_split_rebuild_the_text(pieces: list[str], frame: int) -> None:
    """Whatever the frame boundaries, the first add plus the appends reproduce the message (without the blank
    lines it starts or ends with)."""
    state = SessionState("s")
    rebuilt: dict[str, str] = {}
    for index, piece in enumerate(pieces):
        state.apply(chunk(piece))
        if index % frame == 0 or index == len(pieces) - 1:
            for op in ops_for(state, state.take_changes(), "A"):
                if op["op"] == "add":
                    body = [line["s"][0][0] for line in op["item"]["lines"][1:]]
                    rebuilt[op["item"]["id"]] = "\n".join(body)
                elif op["op"] == "append":
                    rebuilt[op["id"]] += op["text"]
    assert rebuilt == {"1": "".join(pieces).strip("\n")}


class FakeBridge:
    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def lua(self, code: str, *args: Any) -> None:
        self.calls.append((code, args))


@pytest.mark.anyio
async def test_ten_thousand_chunks_cost_tens_of_calls() -> None:
    bridge = FakeBridge()
    state = SessionState("s")
    async with anyio.create_task_group() as tasks:
        renderer = ChatRenderer(bridge, state, "A", tasks.start_soon)  # type: ignore[arg-type]
        for n in range(10_000):
            state.apply(chunk(f"w{n} "))
            renderer.changed()
            if n % 200 == 0:
                # Let the loop breathe as a real stream would (chunks arrive over time).
                await anyio.sleep(0.005)
        renderer.flush()
    assert 1 <= len(bridge.calls) <= 100
    text = "".join(
        op["text"] if op["op"] == "append" else op["item"]["lines"][1]["s"][0][0]
        for _, (_, chunks) in bridge.calls
        for chunk in chunks
        for op in msgspec.json.decode(chunk)
    )
    whole = "".join(f"w{n} " for n in range(10_000))
    # The words as drawn whole (a replay): the paragraph goes on on a new line past LONG_LINE_CHARS.
    assert text == broken(whole)[0]
    assert text.replace("\n", "") == whole


@pytest.mark.anyio
async def test_the_first_words_after_the_prompt_go_at_once_and_the_rest_share_a_frame() -> None:
    bridge = FakeBridge()
    state = SessionState("s")
    async with anyio.create_task_group() as tasks:
        renderer = ChatRenderer(bridge, state, "A", tasks.start_soon)  # type: ignore[arg-type]
        state.begin_turn()
        state.add_user_prompt("hello")
        renderer.flush()  # the prompt, shown as it is sent
        # The agent answers within the prompt's frame: its first words are not held back for it.
        assert renderer.shows_at_once()
        state.apply(chunk("w0 "))
        renderer.changed()
        assert len(bridge.calls) == 2
        assert not renderer.shows_at_once()
        # Those that follow within the frame wait for its end, together.
        for n in range(1, 50):
            state.apply(chunk(f"w{n} "))
            renderer.changed()
        assert len(bridge.calls) == 2
        with anyio.fail_after(5):
            while len(bridge.calls) < 3:
                await anyio.sleep(FRAME_SECONDS / 4)
    assert len(bridge.calls) == 3
    (_, (_, chunks)) = bridge.calls[2]
    texts = [op["text"] for chunk_json in chunks for op in msgspec.json.decode(chunk_json)]
    assert "".join(texts) == "".join(f"w{n} " for n in range(1, 50))


@pytest.mark.anyio
async def test_a_flush_with_nothing_to_send_keeps_the_frame_of_the_call_before_it() -> None:
    bridge = FakeBridge()
    state = SessionState("s")
    async with anyio.create_task_group() as tasks:
        renderer = ChatRenderer(bridge, state, "A", tasks.start_soon)  # type: ignore[arg-type]
        state.apply(chunk("w0 "))
        renderer.changed()  # after a quiet frame: at once
        renderer.flush()  # nothing changed since: no call, and no licence for the next change
        state.apply(chunk("w1 "))
        renderer.changed()
        assert len(bridge.calls) == 1
        with anyio.fail_after(5):
            while len(bridge.calls) < 2:
                await anyio.sleep(FRAME_SECONDS / 4)


class SilentBridge:
    """The permission picker is run through the Ui's own callable: the port's bridge is never used."""

    def lua(self, code: str, *args: Any) -> None:
        raise AssertionError(code)

    def lua_later(self, key: str, code: str, *args: Any) -> None:
        raise AssertionError(code)

    async def lua_result(self, code: str, *args: Any) -> Any:
        raise AssertionError(code)


@pytest.mark.anyio
async def test_permission_queue_answers_everything_once() -> None:
    shown: list[tuple[str, tuple[Any, ...]]] = []
    busy: list[bool] = []
    ui = Ui(lambda code, *args: shown.append((code, args)))
    # The Neovim adapter on a Ui that records what it runs: the broker's queue and the Ui's tokens, no Neovim.
    broker = PermissionBroker(NvimEditorPort(LuaApi(SilentBridge()), ui), busy.append)
    options = [
        s.PermissionOption(option_id="ok", name="OK", kind="allow_once"),
        s.PermissionOption(option_id="no", name="No", kind="reject_once"),
    ]
    request = s.RequestPermissionRequest(
        session_id="s", tool_call=s.ToolCallUpdate(tool_call_id="t"), options=options
    )
    results: list[s.RequestPermissionOutcome] = []

    async def ask() -> None:
        results.append(await broker.ask(request, PermissionView("s", "t", "T", None, [])))

    async with anyio.create_task_group() as tasks:
        for _ in range(3):
            tasks.start_soon(ask)
        with anyio.fail_after(5):
            while not shown:
                await anyio.sleep(0.001)
        assert len(shown) == 1  # one picker at a time
        token = shown[0][1][0]
        ui.resolve(token, "ok")
        ui.resolve(token, "no")  # a late second answer is dropped
        with anyio.fail_after(5):
            while len(shown) < 2:
                await anyio.sleep(0.001)
        assert shown[1][1][0] != token  # each picker answers with its own token
        broker.cancel_session("s")  # the open one and the queued one, as a turn's cancel does
    assert results[0] == s.RequestPermissionOutcomeSelected(option_id="ok")
    assert results[1:] == [s.RequestPermissionOutcomeCancelled()] * 2
    assert busy == [True, False, True, False]


def test_dismissing_picks_the_first_reject_option_else_cancelled() -> None:
    allow = s.PermissionOption(option_id="a", name="A", kind="allow_once")
    reject = s.PermissionOption(option_id="r", name="R", kind="reject_always")
    assert dismissed_outcome([allow, reject]) == s.RequestPermissionOutcomeSelected(option_id="r")
    assert dismissed_outcome([allow]) == s.RequestPermissionOutcomeCancelled()


# ---- what the agent streams cannot hold Neovim: huge texts are cut, and cross in slices ------------------


@pytest.mark.parametrize("kind", ["agent_message_chunk", "agent_thought_chunk", "user_message_chunk"])
def test_a_huge_chunk_shows_its_beginning_a_cut_and_its_end_and_later_chunks_follow(kind: str) -> None:
    state = SessionState("s")
    state.apply(chunk("BEGIN" + "x" * (50 << 20) + "END", kind))
    state.apply(chunk("after", kind))
    item = state.items[0]
    assert isinstance(item, MessageItem) and item.cut is not None
    assert item.text.startswith("BEGIN") and len(item.text) == HEAD_CHARS
    # Its end is shown after the cut, and the whole message is in the file the note opens.
    assert item.cut.tail_text.endswith("xENDafter") and len(item.cut.tail_text) < 2 * TAIL_CHARS
    assert item.hidden == len("BEGIN") + (50 << 20) + len("ENDafter") - HEAD_CHARS - len(item.cut.tail_text)
    whole = Path(item.cut.whole.path).read_text()
    assert whole == "BEGIN" + "x" * (50 << 20) + "ENDafter"
    lines = [line["s"][0][0] for line in item_view(item, "A")["lines"] if "s" in line]
    note = next(line for line in item_view(item, "A")["lines"] if line.get("note"))
    assert note["note"] == item.cut.whole.path and note["s"][0][0] == "… 49.0 MiB cut here"
    assert lines[-1].endswith("ENDafter")


def test_past_the_cut_the_tail_is_appended_and_redrawn_when_the_cut_moves() -> None:
    state = SessionState("s")
    state.apply(chunk("start "))
    state.take_changes()
    for _ in range(4):
        state.apply(chunk("y" * (200 << 10)))
    changes = state.take_changes()
    assert changes.noted == ["1"]
    ops = ops_for(state, changes, "A")
    shown = "".join(op["text"] for op in ops if op["op"] == "append")
    # The beginning up to its bound, then the cut with the tail (in slices: the note's, then appends).
    note_at = next(n for n, op in enumerate(ops) if op["op"] == "note")
    assert len("start ") + len(shown[: HEAD_CHARS - len("start ")]) == HEAD_CHARS
    note = ops[note_at]
    assert note["text"] == "… cut here as the message grows" and note["file"]
    tail = note["tail"] + "".join(op["text"] for op in ops[note_at + 1 :])
    assert len(tail) == 4 * (200 << 10) - (HEAD_CHARS - len("start "))
    # The tail grows by appends until it is twice its bound; then the cut moves and the tail is drawn again.
    state.apply(chunk("z" * 10))
    assert ops_for(state, state.take_changes(), "A") == [{"op": "append", "id": "1", "text": "z" * 10}]
    state.apply(chunk("w" * (1 << 20)))
    ops = ops_for(state, state.take_changes(), "A")
    assert ops[0]["op"] == "note" and ops[0]["text"] == "… 800 KiB cut here"
    tail = ops[0]["tail"] + "".join(op["text"] for op in ops[1:])
    assert tail == "w" * TAIL_CHARS and all(op["op"] == "append" for op in ops[1:])


def test_huge_tool_call_contents_are_cut_in_the_view() -> None:
    state = SessionState("s")
    big = "x" * (50 << 20)
    state.apply(
        update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t",
                "title": "T" * (50 << 10),
                "content": [
                    {"type": "diff", "path": "/big", "oldText": "a", "newText": big},
                    {"type": "content", "content": {"type": "text", "text": big}},
                ],
                "rawInput": {"blob": big},
                "rawOutput": big,
            }
        )
    )
    item = state.tool_call("t")
    assert item is not None and item.raw_input == "(50.0 MiB not kept)" == item.raw_output
    encoded = msgspec.json.encode(ops_for(state, state.take_changes(), "A"))
    assert len(encoded) < 100 << 10
    text = encoded.decode()
    assert "diff of /big: 50.0 MiB, not shown" in text and "… 49.9 MiB more not shown" in text


def test_a_huge_plan_is_cut_in_the_view() -> None:
    state = SessionState("s")
    entries = [{"content": "E" * (10 << 20), "priority": "high", "status": "pending"}]
    entries += [{"content": f"step {n}", "priority": "low", "status": "pending"} for n in range(100_000)]
    state.apply(update({"sessionUpdate": "plan", "entries": entries}))
    (op,) = ops_for(state, state.take_changes(), "A")
    lines = ["".join(seg[0] for seg in line["s"]) for line in op["item"]["lines"]]
    assert len(msgspec.json.encode(op)) < 64 << 10
    assert lines[:2] == ["▍ A", "  Plan"]
    assert lines[2].endswith("… 10.0 MiB more not shown  !") and lines[-1] == "  … 99901 more entries"


@pytest.mark.anyio
async def test_no_notification_carries_more_than_a_frame_and_the_rest_follows_in_order() -> None:
    bridge = FakeBridge()
    async with anyio.create_task_group() as tasks:
        state = SessionState("s")
        renderer = ChatRenderer(bridge, state, "A", tasks.start_soon)  # type: ignore[arg-type]
        texts = [f"{n}:" + "w" * (100 << 10) for n in range(10)]
        for n, text in enumerate(texts):
            state.apply(chunk(text, message_id=f"m{n}"))
            state.apply(update({"sessionUpdate": "tool_call", "toolCallId": f"t{n}", "title": f"t{n}"}))
        renderer.flush()
    sizes = [sum(len(chunk) for chunk in chunks) for _, (_, chunks) in bridge.calls]
    assert len(sizes) > 1 and max(sizes) <= 300 << 10, sizes
    ops = [op for _, (_, chunks) in bridge.calls for chunk in chunks for op in msgspec.json.decode(chunk)]
    shown: dict[str, str] = {}
    for op in ops:
        if op["op"] == "add" and op["item"]["kind"] == "agent":
            # One line of text, under the reply's header for the first message only.
            shown[op["item"]["id"]] = op["item"]["lines"][-1]["s"][0][0]
        elif op["op"] == "append":
            shown[op["id"]] += op["text"]
    assert list(shown.values()) == texts


# ---- memory per tool call: old finished ones keep only their summary --------------------------------------


def tool_call(n: int, status: str = "in_progress") -> s.SessionUpdate:
    return update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": f"t{n}",
            "title": f"Read {n}",
            "kind": "read",
            "status": status,
            "locations": [{"path": f"/f{n}"}],
            "content": [{"type": "content", "content": {"type": "text", "text": f"output {n}"}}],
            "rawInput": {"path": f"/f{n}"},
        }
    )


def chat_text(state: SessionState) -> list[str]:
    ops = ops_for(state, state.take_changes(), "A")
    return ["".join(seg[0] for seg in line["s"]) for op in ops for line in op["item"]["lines"] if "s" in line]


def test_finished_tool_calls_past_the_newest_fold_to_their_summary_line() -> None:
    state = SessionState("s")
    state.apply(tool_call(0))  # still running when it becomes old
    for n in range(1, KEEP_TOOL_DETAILS + 2):
        state.apply(tool_call(n, "completed"))
    lines = chat_text(state)
    # The oldest finished one shows its summary only, with the same text; the newest keep their details.
    assert "  ✓ Read 1  read  completed" in lines and "    output 1" not in lines
    assert "    output 2" in lines and f"    output {KEEP_TOOL_DETAILS + 1}" in lines
    first = state.tool_call("t1")
    assert first is not None and first.folded and first.content == () and first.raw_input is None
    # The running one keeps its details until it finishes, then folds (one line, replaced in place).
    assert "    output 0" in lines
    state.apply(update({"sessionUpdate": "tool_call_update", "toolCallId": "t0", "status": "failed"}))
    changes = state.take_changes()
    assert changes.replaced == ["1"]
    (op,) = ops_for(state, changes, "A")
    assert op["item"]["lines"] == [
        {"s": [["▍ A", "AcpChatAgent"]]},  # it opens the agent's reply
        {"s": [["  ✗ Read 0  read  failed", "AcpChatStatusFailed"]]},
    ]
    # A folded call still takes its status and title; its details are not kept again.
    state.apply(
        update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Read one", "content": []})
    )
    assert chat_text(state) == ["  ✓ Read one  read  completed"]


@pytest.mark.anyio
async def test_a_discarded_renderer_sends_nothing_more_of_its_transcript() -> None:
    bridge = FakeBridge()
    async with anyio.create_task_group() as tasks:
        state = SessionState("s")
        renderer = ChatRenderer(bridge, state, "A", tasks.start_soon)  # type: ignore[arg-type]
        for n in range(10):
            state.apply(chunk("w" * (100 << 10), message_id=f"m{n}"))
        renderer.flush()
        sent = len(bridge.calls)
        # A reload resets the chat and draws it again: the old transcript's rest must not follow.
        renderer.discard()
        state.apply(chunk("late"))
        renderer.discard()
        renderer.flush()
    assert sent == 1 and len(bridge.calls) == 1


def test_a_huge_session_title_is_cut_for_the_window_bar() -> None:
    state = SessionState("s")
    state.apply(update({"sessionUpdate": "session_info_update", "title": "T" * (10 << 20)}))
    (op,) = ops_for(state, state.take_changes(), "A")
    assert len(msgspec.json.encode(op)) < 16 << 10
    assert op["header"].endswith("… 10.0 MiB more not shown")


def test_meta_sends_of_config_options_only_what_lua_completes() -> None:
    """Lua completes `:AcpConfig` from the meta op: ids and the words the host accepts (a boolean's, a
    select's values with groups flattened), never the agent's raw options."""
    state = SessionState("s")
    state.config_options = [
        s.SessionConfigOptionBoolean(id="fast", name="Fast", current_value=True, meta={"x": 1}),
        s.SessionConfigOptionSelect(
            id="model",
            name="Model",
            description="which model",
            current_value="a",
            options=[s.SessionConfigSelectOption(value="a", name="A", description="the first")],
        ),
        s.SessionConfigOptionSelect(
            id="effort",
            name="Effort",
            current_value="b",
            options=[
                s.SessionConfigSelectGroup(
                    group="more", name="More", options=[s.SessionConfigSelectOption(value="b", name="B")]
                )
            ],
        ),
    ]
    assert ops_for(state, Changes(meta={"config"}), "A")[-1]["config"] == [
        {"id": "fast", "values": ["true", "false", "toggle"]},
        {"id": "model", "values": ["a"]},
        {"id": "effort", "values": ["b"]},
    ]


def _mode_option_update(current: str) -> dict[str, Any]:
    return {
        "sessionUpdate": "config_option_update",
        "configOptions": [
            {
                "id": "mode",
                "name": "Mode",
                "category": "mode",
                "type": "select",
                "currentValue": current,
                "options": [
                    {"group": "sandbox", "name": "Sandbox", "options": [{"value": "ask", "name": "Ask"}]},
                    {"group": "profiles", "name": "Profiles", "options": [{"value": "code", "name": "Code"}]},
                ],
            }
        ],
    }


@given(st.lists(st.tuples(st.sampled_from(["ask", "code"]), st.sampled_from(["legacy", "option", "both"]))))
def test_a_mode_reported_both_ways_is_said_once_per_change(reports: list[tuple[str, str]]) -> None:
    """Issue 29: an agent with legacy modes and a mode option reports a change as either, or both in turn:
    the session's mode is the last reported, and the chat says each change once."""
    state = SessionState("s")
    state.set_modes(
        s.SessionModeState(
            current_mode_id="ask",
            available_modes=[s.SessionMode(id="ask", name="Ask"), s.SessionMode(id="code", name="Code")],
        )
    )
    state.apply(update(_mode_option_update("ask")))
    expected, current = [], "ask"
    for mode, way in reports:
        if way in ("legacy", "both"):
            state.apply(update({"sessionUpdate": "current_mode_update", "currentModeId": mode}))
        if way in ("option", "both"):
            state.apply(update(_mode_option_update(mode)))
        if mode != current:
            expected.append(f"Mode: {mode.capitalize()}")
            current = mode
    assert [item.text for item in state.items if isinstance(item, NoticeItem)] == expected
    assert state.current_mode == current
    assert [(mode.id, mode.name) for mode in state.offered_modes] == [
        ("ask", "Sandbox / Ask"),
        ("code", "Profiles / Code"),
    ]
