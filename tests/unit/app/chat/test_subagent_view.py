"""A subagent in the chat (app/chat/subagent_view.py): its line under the tool call that started it, its
transcript indented and folded under that line, open while it asks the user."""

from __future__ import annotations

from acp_nvim.app.chat.view import item_view
from acp_nvim.client.session.state import SessionState
from tests.unit.client.session.test_state import chunk, update
from tests.unit.client.session.test_unstable_updates import CHILD, announce, tool_call


def parent_with_child() -> SessionState:
    state = SessionState("s")
    state.apply(tool_call("spawn"))
    state.apply(announce(title="worker", state={"state": "running"}))
    child = state.children[CHILD].state
    assert isinstance(child, SessionState)
    child.apply(chunk("child says hi"))
    child.apply(
        update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "c1",
                "title": "Run ls",
                "kind": "execute",
                "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": "out"}}],
            }
        )
    )
    return state


def lines_of(state: SessionState) -> list[tuple[str, str | None]]:
    spawn = state.tool_call("spawn")
    assert spawn is not None
    view = item_view(spawn, "codex", "s", children=state.children_under(spawn.key))
    return [("".join(seg[0] for seg in line.get("s", [])) or str(line), line.get("f")) for line in view.lines]


def test_the_child_is_a_fold_under_its_line_with_its_own_folds_deeper() -> None:
    state = parent_with_child()
    lines = lines_of(state)
    header = lines.index(("    ↳ subagent worker  running", ">1"))
    body = lines[header + 1 :]
    # No header naming the agent again; its words, its tool call and that call's details a level deeper.
    assert body[0] == ("    child says hi", "1")
    assert body[1][0].startswith("      ✓ Run ls") and body[1][1] == ">2"
    assert body[2] == ("        out", "2")
    assert all("▍" not in text for text, _ in body)


def test_the_child_is_open_while_it_asks() -> None:
    state = parent_with_child()
    state.children[CHILD].asking = 1
    lines = lines_of(state)
    header = lines.index(("    ↳ subagent worker  awaiting permission", None))
    assert lines[header + 1] == ("    child says hi", None)


def test_a_long_message_of_the_child_is_drawn_as_its_end() -> None:
    state = parent_with_child()
    child = state.children[CHILD].state
    assert isinstance(child, SessionState)
    child.apply(chunk("x" * 20_000 + "THE END", message_id="m2"))
    lines = lines_of(state)
    texts = [text for text, _ in lines]
    assert any(text.endswith("THE END") for text in texts)
    assert sum(len(text) for text in texts) < 10_000
    assert "    … 11 KiB before" in texts
