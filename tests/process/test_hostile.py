"""The client against a hostile agent (tests/agents/hostile_agent.py), a real subprocess: garbage, huge lines,
invalid JSON-RPC, bogus answers, bad params, unknown methods, floods, storms, stderr floods, and agents that
die or hang. For each: nothing escapes the connection, every request the agent sent gets exactly one answer
with the right code (the agent's journal tells), the user gets a few messages instead of one per bad line,
memory stays bounded, and the connection still works afterwards."""

from __future__ import annotations

import json
import os
import re
import resource
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_nvim.client.agent.connection import AgentConnection, InvalidAnswer
from acp_nvim.client.agent.handshake import HandshakeTimeout
from acp_nvim.client.agent.process import STDERR_LINE_MAX, AgentCommand, group_has_members
from acp_nvim.jsonrpc import ConnectionClosed
from acp_nvim.protocol import schema as s
from tests.conftest import ROOT
from tests.process.recording_editor import RecordingEditor
from tests.trouble_log import troubles_by_kind
from tests.wire_check import WireCheck

pytestmark = pytest.mark.anyio

HOSTILE_AGENT = ROOT / "tests" / "agents" / "hostile_agent.py"
MiB = 1 << 20
# Generous: two shared cores, and some shows move 100 MB through a pipe.
SHOW_DEADLINE = 90
SESSION_ID = "hostile-session"


class HostileEditor(RecordingEditor):
    """Advertises and serves fs reads (from memory), so the agent has a method it may legitimately call."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def client_capabilities(self) -> s.ClientCapabilities:
        return s.ClientCapabilities(fs=s.FileSystemCapabilities(read_text_file=True))

    async def read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        self.reads += 1
        return s.ReadTextFileResponse(content=f"content of {params.path}")


@dataclass
class Hostile:
    agent: AgentConnection
    editor: HostileEditor
    journal_path: Path
    troubles: list[str] = field(default_factory=list)
    protocol_errors: list[str] = field(default_factory=list)

    async def play(self, show: str) -> s.PromptResponse:
        with anyio.fail_after(SHOW_DEADLINE):
            return await self.agent.prompt(SESSION_ID, [s.ContentBlockText(text=show)])

    def journal(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.journal_path.read_text().splitlines()]


@asynccontextmanager
async def hostile(
    tmp_path: Path,
    wire: WireCheck | None = None,
    env: dict[str, str] | None = None,
    handshake: float = 20,
    **launch: Any,
) -> AsyncIterator[Hostile]:
    journal = tmp_path / "journal.jsonl"
    command = AgentCommand(
        sys.executable,
        [str(HOSTILE_AGENT)],
        env={"HOSTILE_JOURNAL": str(journal), **(env or {})},
        cwd=str(tmp_path),
    )
    editor = HostileEditor()
    troubles: list[str] = []
    protocol_errors: list[str] = []
    async with AgentConnection.launch(
        command,
        editor,
        handshake_timeout=handshake,
        on_message=wire.record if wire is not None else None,
        on_trouble=troubles.append,
        on_protocol_error=protocol_errors.append,
        **launch,
    ) as agent:
        h = Hostile(agent, editor, journal, troubles, protocol_errors)
        session = await agent.new_session(str(tmp_path))
        assert session.session_id == SESSION_ID
        # Sent right behind the session/new answer, before the session's id was known here.
        assert editor.agent_text() == "hello "
        yield h


@pytest.fixture
def wire(schema: dict[str, Any]) -> WireCheck:
    return WireCheck(schema)


def answer_key(request_id: Any) -> str:
    return json.dumps(request_id)


def check_journal(h: Hostile, show: str) -> dict[str, list[dict[str, Any]]]:
    """Every request the agent sent during the show has exactly one answer (two for two requests sharing an
    id) with the expected outcome; the unreadable lines got their id-null errors; nothing else was answered.
    Returns the answers by id for further checks."""
    entries = h.journal()
    done = [e for e in entries if e["event"] == "show_done" and e["show"] == show]
    assert done and done[0]["missing"] == [], done
    sent = [e for e in entries if e["event"] == "sent"]
    answers: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        if entry["event"] == "answer":
            answers.setdefault(answer_key(entry["id"]), []).append(entry)
    expected = Counter(answer_key(e["id"]) for e in sent)
    for key, count in expected.items():
        assert len(answers.get(key, [])) == count, f"request {key}: {answers.get(key)}"
    for entry in sent:
        for answer in answers[answer_key(entry["id"])]:
            if entry["expect"] == "result":
                assert "result" in answer and "error" not in answer, answer
            else:
                assert answer["error"]["code"] == entry["expect"], (entry, answer)
                assert "Traceback" not in answer["error"]["message"]
    null_expected = Counter[int]()
    for entry in entries:
        if entry["event"] == "expect_null":
            null_expected[entry["code"]] += entry["count"]
    null_answers = Counter(a["error"]["code"] for a in answers.get("null", []))
    assert null_answers == null_expected
    unexpected = set(answers) - set(expected) - {"null"}
    assert not unexpected, f"answers to ids the agent never used: {unexpected}"
    return answers


async def survives(h: Hostile, show: str) -> dict[str, list[dict[str, Any]]]:
    """Play the show; the turn ends normally with "survived", and a second, plain turn works too."""
    result = await h.play(show)
    assert result.stop_reason == "end_turn"
    assert h.editor.agent_text().endswith("survived")
    answers = check_journal(h, show)
    before = h.editor.agent_text()
    assert (await h.play("none")).stop_reason == "end_turn"
    assert h.editor.agent_text() == before + "survived"
    return answers


def rss_mib() -> float:
    # Linux reports kilobytes.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def report(text: str) -> None:
    # Figures for the record (pytest -s shows them; -rA collects them).
    print(f"\n[hostile] {text}", file=sys.stderr)


# ---- the shows ---------------------------------------------------------------------------------------


async def test_garbage_lines_give_one_message_not_a_thousand(
    tmp_path: Path, wire: WireCheck, caplog: pytest.LogCaptureFixture
) -> None:
    async with hostile(tmp_path, wire) as h:
        await survives(h, "garbage")
    assert troubles_by_kind(caplog.messages) == {"unreadable": 1000}
    assert len(h.protocol_errors) == 1000  # the raw hook still sees each line, for the log
    assert 1 <= len(h.troubles) <= 3, h.troubles
    assert h.troubles[0] == "agent Hostile sent a line that is not JSON (see :AcpLog)"
    assert len(h.troubles) == 1, h.troubles  # the burst's count is in the log, not a second message
    assert all("\ufffd" not in t and "Traceback" not in t for t in h.troubles)
    wire.assert_valid()


async def test_a_100_mib_line_is_dropped_as_it_streams(tmp_path: Path, wire: WireCheck) -> None:
    async with hostile(tmp_path, wire) as h:
        rss_before = rss_mib()
        tracemalloc.start()
        try:
            started = time.monotonic()
            result = await h.play("huge")
            elapsed = time.monotonic() - started
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        rss_growth = rss_mib() - rss_before
        assert result.stop_reason == "end_turn"
        check_journal(h, "huge")
        assert h.editor.agent_text() == "hello after the huge linesurvived"
        assert (await h.play("none")).stop_reason == "end_turn"
    report(
        f"100 MiB line: dropped in {elapsed:.1f} s; traced peak {peak / MiB:.1f} MiB; "
        f"peak RSS growth {rss_growth:.1f} MiB"
    )
    # The default cap is 64 MiB: at most that much is buffered before the line is known to be too long.
    assert peak < 80 * MiB
    assert rss_growth < 80
    assert len(h.troubles) == 1 and "over the size limit" in h.troubles[0]
    (dropped,) = h.protocol_errors
    match = re.search(
        r"message of more than 64 MiB from the agent python\S* was dropped \((\d+) bytes\)", dropped
    )
    assert match and int(match.group(1)) > 100 * MiB, dropped
    wire.assert_valid()


async def test_a_lower_cap_keeps_memory_lower(tmp_path: Path) -> None:
    async with hostile(tmp_path, env={"HOSTILE_HUGE_MB": "20"}, max_message_size=MiB) as h:
        tracemalloc.start()
        try:
            await survives(h, "huge")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    report(f"20 MiB line against a 1 MiB cap: traced peak {peak / MiB:.1f} MiB")
    assert peak < 8 * MiB
    assert len(h.troubles) == 1


async def test_valid_json_that_is_not_jsonrpc(
    tmp_path: Path, wire: WireCheck, caplog: pytest.LogCaptureFixture
) -> None:
    async with hostile(tmp_path, wire) as h:
        answers = await survives(h, "notjsonrpc")
    assert len(answers["null"]) == 12
    # 12 without a usable id, and nj-1, nj-2 answered under their ids; nj-3 is a request with bad params.
    assert troubles_by_kind(caplog.messages) == {"not_jsonrpc": 14}
    assert len(h.troubles) <= 2, h.troubles
    assert h.troubles[0] == "agent Hostile sent JSON that is not a valid JSON-RPC message (see :AcpLog)"
    assert len(h.troubles) == 1, h.troubles  # the burst's count is in the log, not a second message
    wire.assert_valid()


async def test_bogus_responses_and_duplicate_ids(tmp_path: Path, wire: WireCheck) -> None:
    async with hostile(tmp_path, wire) as h:
        answers = await survives(h, "bogus-responses")
    contents = sorted(a["result"]["content"] for a in answers[answer_key("dup")])
    assert contents == ["content of /dup-a", "content of /dup-b"]
    # Answers to nothing are the agent's problem, not the user's: logged, not shown.
    assert h.troubles == []
    wire.assert_valid()


async def test_requests_with_bad_params_get_invalid_params(
    tmp_path: Path, wire: WireCheck, caplog: pytest.LogCaptureFixture
) -> None:
    async with hostile(tmp_path, wire) as h:
        answers = await survives(h, "badparams")
    messages = [a["error"]["message"] for v in answers.values() for a in v if "error" in a]
    assert any("$.path" in message for message in messages)
    assert any("options" in message for message in messages)
    # Only the valid permission request reached the editor; no malformed update did.
    assert [r.tool_call.tool_call_id for r in h.editor.permission_requests] == ["t3"]
    assert h.editor.kinds() == ["SessionUpdateAgentMessageChunk"] * 3
    assert troubles_by_kind(caplog.messages) == {"malformed_update": 4}
    assert len(h.troubles) <= 2, h.troubles
    assert h.troubles[0].startswith("agent Hostile sent a malformed session/update; it was dropped: ")
    assert len(h.troubles) == 1, h.troubles  # the burst's count is in the log, not a second message
    wire.assert_valid()


async def test_unknown_methods_and_notifications(tmp_path: Path, wire: WireCheck) -> None:
    async with hostile(tmp_path, wire) as h:
        answers = await survives(h, "unknown")
    not_found = [a for v in answers.values() for a in v if a.get("error", {}).get("code") == -32601]
    assert len(not_found) == 6
    assert h.troubles == []
    wire.assert_valid()


async def test_ten_thousand_concurrent_reads_are_all_answered(tmp_path: Path, wire: WireCheck) -> None:
    async with hostile(tmp_path, wire) as h:
        started = time.monotonic()
        await h.play("readflood")
        elapsed = time.monotonic() - started
        answers = check_journal(h, "readflood")
        assert (await h.play("none")).stop_reason == "end_turn"
    sent = {e["id"]: e["path"] for e in h.journal() if e["event"] == "sent" and e["show"] == "readflood"}
    flood = {i: p for i, p in sent.items() if p.startswith("/flood/")}
    assert len(flood) == 10_000
    for request_id, path in flood.items():
        (answer,) = answers[answer_key(request_id)]
        assert answer["result"] == {"content": f"content of {path}"}
    report(f"10,000 concurrent fs/read_text_file: all answered in {elapsed:.1f} s (turn included)")
    assert h.troubles == []
    wire.assert_valid()


async def test_update_storm_for_an_unknown_session(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async with hostile(tmp_path) as h:
        started = time.monotonic()
        await survives(h, "stormunknownsession")
        elapsed = time.monotonic() - started
    assert troubles_by_kind(caplog.messages) == {"unknown_session": 100_000}
    report(f"100,000 updates for an unknown session: turn took {elapsed:.1f} s")
    assert all(u.session_id == SESSION_ID for u in h.editor.updates)
    assert len(h.troubles) <= 2, h.troubles
    assert h.troubles[0].startswith("agent Hostile sent updates for a session that is not open")
    assert len(h.troubles) == 1, h.troubles  # the burst's count is in the log, not a second message


async def test_100_mib_of_stderr(tmp_path: Path) -> None:
    async with hostile(tmp_path) as h:
        rss_before = rss_mib()
        tracemalloc.start()
        try:
            started = time.monotonic()
            await h.play("stderr")
            elapsed = time.monotonic() - started
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        rss_growth = rss_mib() - rss_before
        check_journal(h, "stderr")
        assert (await h.play("none")).stop_reason == "end_turn"
        stderr = h.agent.process.stderr
        lines_read = stderr.count
        tail = stderr.lines(40)
    report(
        f"100 MiB of stderr: drained in {elapsed:.1f} s; traced peak {peak / MiB:.1f} MiB; "
        f"peak RSS growth {rss_growth:.1f} MiB"
    )
    # All 100 MiB were read: the first half as lines of 1,000 bytes, then the endless line to its end (its
    # beginning kept) and the words after it.
    assert lines_read >= 50 * MiB // 1000 + 2
    assert tail[-2:] == ["z" * STDERR_LINE_MAX, "last words on stderr"]
    assert all(len(line) <= STDERR_LINE_MAX for line in tail)
    assert peak < 16 * MiB
    assert rss_growth < 32
    assert h.troubles == []


async def test_invalid_prompt_answer_is_an_error_not_a_crash(tmp_path: Path, wire: WireCheck) -> None:
    async with hostile(tmp_path, wire) as h:
        with pytest.raises(
            InvalidAnswer, match=r"Hostile sent an invalid answer to session/prompt: .*stopReason"
        ):
            await h.play("badanswer")
        assert (await h.play("none")).stop_reason == "end_turn"
    wire.assert_valid()


# ---- dead and hung agents ----------------------------------------------------------------------------


async def test_agent_exiting_mid_turn_fails_the_prompt_with_code_and_stderr(tmp_path: Path) -> None:
    async with hostile(tmp_path) as h:
        with pytest.raises(ConnectionClosed) as caught:
            await h.play("exit")
        pgid = h.agent.process.pgid
    assert str(caught.value).endswith("exited with code 3: fatal: the hostile agent exploded")
    assert h.editor.agent_text() == "hello about to exit"
    assert not group_has_members(pgid)


async def test_agent_killed_by_a_signal_names_it(tmp_path: Path) -> None:
    async with hostile(tmp_path) as h:
        with pytest.raises(
            ConnectionClosed, match="was killed by SIGKILL: the hostile agent is about to be killed"
        ):
            await h.play("sigkill")


async def test_agent_that_never_answers_initialize(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(HandshakeTimeout, match=r"did not answer initialize within 1 s"):
        async with hostile(tmp_path, env={"HOSTILE_INIT": "mute"}, handshake=1.0):
            pass
    # Stopping a live agent: closing stdin is enough for this one, well before the SIGTERM grace.
    assert time.monotonic() - started < 10


async def test_hung_agent_keeps_the_turn_pending_and_stop_ends_it(tmp_path: Path) -> None:
    outcome: list[BaseException] = []
    turn_over = anyio.Event()
    async with hostile(tmp_path) as h:
        pgid = h.agent.process.pgid

        async def turn() -> None:
            try:
                await h.agent.prompt(SESSION_ID, [s.ContentBlockText(text="hang")])
            except ConnectionClosed as err:
                outcome.append(err)
            finally:
                turn_over.set()

        with anyio.fail_after(SHOW_DEADLINE):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(turn)
                while not h.editor.agent_text().endswith("hanging"):
                    await h.editor.updated.wait()
                # No timeout on prompt turns (a silent agent may be thinking): a second on, still open.
                with anyio.move_on_after(1.0):
                    await turn_over.wait()
                assert not turn_over.is_set()
                children = [e["pid"] for e in h.journal() if e["event"] == "child"]
                assert len(children) == 1 and os.getpgid(children[0]) == pgid
                started = time.monotonic()
                await h.agent.process.stop()
                stop_time = time.monotonic() - started
                # The stopped agent's pipe closes: the pending turn fails, naming how the agent ended.
                await turn_over.wait()
    report(f"hung agent ignoring SIGTERM, with a grandchild: stopped in {stop_time:.1f} s")
    assert outcome and "was killed by SIGKILL" in str(outcome[0])
    assert not group_has_members(pgid)
