"""Whether a file's snapshot, taken when the agent's tool call began, can be what the file held before the
call's edit: an agent that writes in place (truncate, then write) may be caught mid-write, and an empty or
half-written snapshot taken for the text before would make a three-way merge see every line as changed."""

from __future__ import annotations


def fits_diff(absent: bool, data: bytes, diff: tuple[str | None, str] | None) -> bool:
    """False when the call's diff says it replaced text (`old_text`) that the snapshot does not hold; True
    when there is no diff to judge by, or the diff created the file."""
    if diff is None or diff[0] is None or not diff[0]:
        return True
    if absent:
        return False
    return diff[0].encode("utf-8") in data or diff[0].replace("\n", "\r\n").encode("utf-8") in data
