"""Issue 29: the agent's context compactions in the session reducer: the first update of an id puts one item
where the conversation is; later updates and summary chunks patch it in place."""

from __future__ import annotations

from acp_nvim.client.session.state import SessionState
from acp_nvim.client.session.transcript import CompactionItem, MessageItem
from tests.unit.client.session.test_state import chunk, update


def compaction(status: str, **fields: object) -> dict[str, object]:
    return {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": status, **fields}


def summary_chunk(text: str, compaction_id: str = "c1") -> dict[str, object]:
    return {
        "sessionUpdate": "compaction_summary_chunk",
        "compactionId": compaction_id,
        "content": {"type": "text", "text": text},
    }


def test_a_compaction_is_one_item_patched_in_place() -> None:
    state = SessionState("s")
    state.apply(chunk("Before."))
    state.apply(update(compaction("in_progress")))
    changes = state.take_changes()
    (item,) = [i for i in state.items if isinstance(i, CompactionItem)]
    assert changes.added == [state.items[0].key, item.key]
    state.apply(update(summary_chunk("The user wants ")))
    state.apply(update(summary_chunk("a fix.")))
    state.apply(update(compaction("completed")))
    changes = state.take_changes()
    assert changes.added == [] and changes.replaced == [item.key]
    assert (item.status, item.summary, item.error) == ("completed", "The user wants a fix.", None)
    # The agent's next words are a message of their own after it, not glued onto the one before.
    state.apply(chunk("After."))
    assert [type(i) for i in state.items] == [MessageItem, CompactionItem, MessageItem]


def test_a_summary_chunk_of_a_new_id_starts_a_compaction_and_a_failure_keeps_its_error() -> None:
    state = SessionState("s")
    state.apply(update(summary_chunk("Partial", compaction_id="c1")))
    (item,) = state.items
    assert isinstance(item, CompactionItem) and item.status == "in_progress" and item.summary == "Partial"
    state.apply(
        update(compaction("failed", error="context window exceeded", summary=[{"type": "text", "text": "S"}]))
    )
    assert (item.status, item.summary, item.error) == ("failed", "S", "context window exceeded")
    assert len(state.items) == 1
