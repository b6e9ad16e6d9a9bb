"""terminal/* served by lua/acp_nvim/editor/terminal.lua: real PTY jobs in a real headless Neovim. What the
agent gets of them is decided by the host (`acp_nvim/app/editor/terminal_rules.py`): the helpers here pass
Lua's facts and output through those decisions."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

import pytest

from acp_nvim.app.editor.terminal_rules import Tail, check_spec, output_limit, terminal_refusal
from acp_nvim.jsonrpc import RpcError
from acp_nvim.nvim.lua_values import TerminalOutput, from_lua

T = 'require("acp_nvim.editor.terminal")'


def error_table(err: RpcError) -> dict[str, Any]:
    return {"ok": False, "code": err.code, "message": err.message, "data": err.data}


def term(nvim: Any, fn: str, *args: Any) -> Any:
    """A call into terminal.lua; a request the host refuses, or a fact Lua reports, as the agent's error."""
    command = args[0].get("command") if fn == "create" else None
    if fn == "create":
        spec = args[0]
        names = [e["name"] for e in spec.get("env", [])]
        try:
            check_spec(spec.get("command", ""), spec.get("cwd"), spec.get("output_byte_limit"), names)
        except RpcError as err:
            return error_table(err)
        # As the host does: the limit always goes with the spec.
        args = ({**spec, "output_byte_limit": output_limit(spec.get("output_byte_limit"))}, *args[1:])
    res = nvim.exec_lua(f"return {T}.{fn}(...)", *args)
    if isinstance(res, dict) and res.get("ok") is False:
        terminal_id = None if fn == "create" else args[0]
        return error_table(terminal_refusal(res.get("fact"), terminal_id, command, res.get("detail")))
    return res


def agent_view(answer: dict[str, Any]) -> dict[str, Any]:
    """An `output` answer with the text and `truncated` the agent gets of it (the host cuts the tail)."""
    tail = Tail()
    text = tail.take(from_lua(answer, TerminalOutput))
    return {**answer, "output": text, "truncated": tail.truncated}


def create(nvim: Any, command: str, *args: str, **spec: Any) -> str:
    res = term(nvim, "create", {"command": command, "args": list(args), **spec})
    assert res["ok"] is True, res
    return str(res["terminal_id"])


def wait_exit(nvim: Any, tid: str, timeout_ms: int = 10_000) -> dict[str, Any]:
    """Wait inside Neovim (its event loop keeps running) until the command has ended; its output."""
    done = nvim.exec_lua(
        f"""local id, ms = ...
        return vim.wait(ms, function() return {T}.output(id).exit_status ~= nil end, 10)""",
        tid,
        timeout_ms,
    )
    assert done is True, f"terminal {tid} did not exit within {timeout_ms} ms"
    out = term(nvim, "output", tid)
    assert out["ok"] is True
    return agent_view(out)


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group, from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state != "Z":
            members.append(int(entry))
    return members


def wait_group_gone(nvim: Any, pgid: int, timeout_ms: int = 8_000) -> None:
    """Let Neovim run until no live process is left in the group (checked by scanning /proc from Python)."""
    for _ in range(timeout_ms // 50):
        if not group_members(pgid):
            return
        nvim.exec_lua("vim.wait(50)")
    raise AssertionError(f"processes of group {pgid} still alive: {group_members(pgid)}")


def wait_members(nvim: Any, pgid: int, count: int) -> None:
    for _ in range(100):
        if len(group_members(pgid)) >= count:
            return
        nvim.exec_lua("vim.wait(50)")
    raise AssertionError(f"group {pgid} has {group_members(pgid)}, expected {count} processes")


def test_output_and_exit_code(nvim_clean: Any) -> None:
    tid = create(nvim_clean, "printf", "hello\\nworld\\n")
    out = wait_exit(nvim_clean, tid)
    assert out["output"] == "hello\nworld\n"
    assert out["truncated"] is False
    assert out["exit_status"] == {"exit_code": 0}

    tid = create(nvim_clean, "sh", "-c", "echo failing; exit 7")
    out = wait_exit(nvim_clean, tid)
    assert out["output"] == "failing\n"
    assert out["exit_status"] == {"exit_code": 7}


def test_output_before_exit_has_no_exit_status(nvim_clean: Any) -> None:
    tid = create(nvim_clean, "sh", "-c", "echo started; sleep 30")
    started = nvim_clean.exec_lua(
        f"""local id = ...
        return vim.wait(5000, function() return {T}.output(id).output == "started\\n" end, 10)""",
        tid,
    )
    assert started is True
    out = term(nvim_clean, "output", tid)
    assert "exit_status" not in out
    term(nvim_clean, "release", tid)


def test_death_by_signal(nvim_clean: Any) -> None:
    tid = create(nvim_clean, "sh", "-c", "kill -KILL $$")
    assert wait_exit(nvim_clean, tid)["exit_status"] == {"signal": "SIGKILL"}
    tid = create(nvim_clean, "sh", "-c", "kill -SEGV $$")
    assert wait_exit(nvim_clean, tid)["exit_status"] == {"signal": "SIGSEGV"}


def test_cwd_env_and_shell_line(nvim_clean: Any, tmp_path: Path) -> None:
    tid = create(
        nvim_clean,
        "sh",
        "-c",
        'pwd; echo "$ACP_TEST_VAR"; echo "$HOME"',
        cwd=str(tmp_path),
        env=[{"name": "ACP_TEST_VAR", "value": "from agent"}],
    )
    out = wait_exit(nvim_clean, tid)
    assert out["output"] == f"{tmp_path}\nfrom agent\n{os.environ['HOME']}\n"
    # A lone command line with spaces runs through sh.
    tid = create(nvim_clean, "echo one two | tr a-z A-Z")
    assert wait_exit(nvim_clean, tid)["output"] == "ONE TWO\n"


def test_lua_keeps_the_hosts_limit_and_decides_nothing_of_its_own(nvim_clean: Any) -> None:
    """The limit comes from the host with every spec, and whether the agent's tail was cut is the host's."""
    refused = nvim_clean.exec_lua(f"return {T}.create(...)", {"command": "true"})
    assert refused == {"ok": False, "fact": "bad_spec", "detail": "no output_byte_limit"}
    tid = create(nvim_clean, "printf", "0123456789", output_byte_limit=4)
    wait_exit(nvim_clean, tid)
    answer = nvim_clean.exec_lua(f"return {T}.output(...)", tid)
    assert (answer["output"], answer["limit"], "truncated" in answer) == ("6789", 4, False)


def test_output_byte_limit_cuts_at_a_character_boundary(nvim_clean: Any) -> None:
    text = "start-\u00e9\u00e9\u00e9-\u20ac-end"  # é is 2 bytes, € is 3
    raw = text.encode()
    tail = "-\u20ac-end".encode()
    # One byte more than the tail: the cut lands inside the last é, which must be dropped whole.
    limit = len(tail) + 1
    tid = create(nvim_clean, "printf", "%s", text, output_byte_limit=limit)
    out = wait_exit(nvim_clean, tid)
    assert out["truncated"] is True
    assert out["output"] == "-\u20ac-end"
    assert len(out["output"].encode()) <= limit
    # Room for everything: not truncated.
    tid = create(nvim_clean, "printf", "%s", text, output_byte_limit=len(raw))
    out = wait_exit(nvim_clean, tid)
    assert out == {
        "ok": True,
        "output": text,
        "truncated": False,
        "exit_status": {"exit_code": 0},
        "from": 0,
        "total": len(raw),
        "limit": len(raw),
    }


def test_output_since_answers_only_what_is_new(nvim_clean: Any) -> None:
    text = "caf\u00e9 au lait\n"
    raw = text.encode()
    tid = create(nvim_clean, "printf", "%s", text, output_byte_limit=1000)
    wait_exit(nvim_clean, tid)
    # Cut inside the é: the host joins the bytes back.
    out = term(nvim_clean, "output", tid, 4)
    assert (out["from"], out["total"]) == (4, len(raw))
    assert out["output"].encode("utf-8", "surrogateescape") == raw[4:]
    assert term(nvim_clean, "output", tid, len(raw))["output"] == ""
    # Out of the kept window (or nonsense): everything kept.
    for since in (len(raw) + 1, -1):
        out = term(nvim_clean, "output", tid, since)
        assert (out["output"], out["from"]) == (text, 0)


LUA_HEAP_KIB = "collectgarbage('collect') return collectgarbage('count')"


def test_large_output_stays_bounded(nvim_clean: Any) -> None:
    heap_before = nvim_clean.exec_lua(LUA_HEAP_KIB)
    tid = create(
        nvim_clean,
        "sh",
        "-c",
        "yes 0123456789abcdef | head -c 4000000; printf END",
        output_byte_limit=1000,
    )
    out = wait_exit(nvim_clean, tid, 60_000)
    assert out["truncated"] is True
    full = ("0123456789abcdef\n" * 250_000)[:4_000_000] + "END"
    assert full.endswith(out["output"]) and len(out["output"]) > 900
    assert len(out["output"].encode()) <= 1000
    # What Lua holds of the 4 MB is the tail it answers with: its heap grew by far less than the output.
    assert nvim_clean.exec_lua(LUA_HEAP_KIB) - heap_before < 512


def vm_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


def test_flooding_command_does_not_grow_neovim(nvim_clean: Any) -> None:
    """Every on_stdout call leaves Neovim a Vimscript list only a garbage collection frees (Neovim #10795),
    and Neovim collects on its own only after 'updatetime' without events: the flood itself must trigger
    it, or Neovim grows by twice what the command prints."""
    printed = 16 * 1024 * 1024
    pid = nvim_clean.exec_lua("return vim.fn.getpid()")
    nvim_clean.exec_lua("require('acp_nvim.editor.job_output_gc').threshold = 1024 * 1024")
    before = vm_kib(pid, "VmRSS")
    tid = create(nvim_clean, "sh", "-c", f"yes 0123456789abcdef | head -c {printed}", output_byte_limit=1000)
    # Wait for a notification, not inside vim.wait(): Neovim's main loop must run as it does for a user.
    nvim_clean.exec_lua(
        f"""local id, chan = ...
        local timer = vim.defer_fn(function() vim.rpcnotify(chan, "exit", "timeout") end, 60000)
        {T}.wait_for_exit(id, function()
          timer:stop()
          vim.rpcnotify(chan, "exit", "done")
        end)""",
        tid,
        nvim_clean.channel_id,
    )
    message = nvim_clean.next_message()
    assert (message.name, message.args) == ("exit", ["done"]), message
    grown = (vm_kib(pid, "VmHWM") - before) * 1024
    collections = nvim_clean.exec_lua("return require('acp_nvim.editor.job_output_gc').collections")
    assert collections >= 4, collections
    # Without the collections: ~5 times what is printed.
    assert grown < printed, f"Neovim grew {grown / 2**20:.1f} MiB while a command printed 16 MiB"


def test_no_collection_while_the_command_line_is_open(nvim_clean: Any) -> None:
    """A collection frees lists C code may still hold mid-evaluation (input(), the command line), so it
    waits for plain Normal mode."""
    garbage = "require('acp_nvim.editor.job_output_gc')"
    nvim_clean.exec_lua(f"{garbage}.threshold = 64 * 1024")
    tid = create(nvim_clean, "sh", "-c", "yes 0123456789abcdef", output_byte_limit=1000)
    nvim_clean.input(":")
    assert nvim_clean.api.get_mode()["mode"] == "c"
    collections = nvim_clean.exec_lua(f"return {garbage}.collections")
    start = term(nvim_clean, "output", tid)["total"]
    deadline = time.monotonic() + 30
    while term(nvim_clean, "output", tid)["total"] < start + 4 * 1024 * 1024:
        assert time.monotonic() < deadline, "the command printed too little"
    assert nvim_clean.exec_lua(f"return {garbage}.collections") == collections
    nvim_clean.input("<Esc>")
    while nvim_clean.exec_lua(f"return {garbage}.collections") == collections:
        assert time.monotonic() < deadline, "no collection back in Normal mode"
    term(nvim_clean, "kill", tid)


def test_collections_go_on_in_terminal_mode(nvim_clean: Any) -> None:
    """Terminal mode triggers no SafeState: watching a flooding terminal from inside it, TextChangedT is when
    the lists are collected."""
    garbage = "require('acp_nvim.editor.job_output_gc')"
    nvim_clean.exec_lua(f"{garbage}.threshold = 64 * 1024")
    tid = create(nvim_clean, "sh", "-c", "yes 0123456789abcdef", output_byte_limit=1000)
    assert term(nvim_clean, "open", tid, {"enter": True})["ok"] is True
    nvim_clean.input("i")
    deadline = time.monotonic() + 30
    while nvim_clean.api.get_mode()["mode"] != "t":
        assert time.monotonic() < deadline, "no Terminal mode"
    collections = nvim_clean.exec_lua(f"return {garbage}.collections")
    while nvim_clean.exec_lua(f"return {garbage}.collections") < collections + 3:
        assert time.monotonic() < deadline, "no collection in Terminal mode"
    assert nvim_clean.api.get_mode()["mode"] == "t"
    term(nvim_clean, "kill", tid)


def test_wait_for_exit_callback(nvim_clean: Any) -> None:
    tid = create(nvim_clean, "sh", "-c", "read _ignored; exit 3")
    res = nvim_clean.exec_lua(
        f"""local id = ...
        _G.acp_test_exit = nil
        return {T}.wait_for_exit(id, function(tid, status) _G.acp_test_exit = {{ tid, status }} end)""",
        tid,
    )
    assert res == {"ok": True, "pending": True}
    # Answer the `read` through the terminal, as a user would type.
    nvim_clean.exec_lua(f"vim.api.nvim_chan_send(vim.bo[{T}.bufnr(...)].channel, 'go\\n')", tid)
    got = nvim_clean.exec_lua("return vim.wait(10000, function() return _G.acp_test_exit ~= nil end, 10)")
    assert got is True
    assert nvim_clean.exec_lua("return _G.acp_test_exit") == [tid, {"exit_code": 3}]
    # Once ended, wait answers at once.
    assert term(nvim_clean, "wait_for_exit", tid) == {"ok": True, "exit_status": {"exit_code": 3}}


def test_command_leads_its_own_process_group(nvim_clean: Any) -> None:
    res = term(nvim_clean, "create", {"command": "sleep", "args": ["30"]})
    pid = res["pid"]
    # The group is set up between fork and exec: wait until the command runs, in its group.
    wait_members(nvim_clean, pid, 2)
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    pgrp, session = int(fields[2]), int(fields[3])
    assert pgrp == pid and session == pid
    assert os.getpgid(pid) != os.getpgid(0)
    term(nvim_clean, "kill", res["terminal_id"])
    assert wait_exit(nvim_clean, res["terminal_id"])["exit_status"] == {"signal": "SIGTERM"}


def test_kill_a_command_that_ignores_sigterm(nvim_clean: Any) -> None:
    nvim_clean.exec_lua(f"{T}.kill_grace_ms = 500")
    res = term(
        nvim_clean,
        "create",
        {"command": "sh", "args": ["-c", 'trap "" TERM; sleep 60 & sleep 60; wait']},
    )
    tid, pgid = res["terminal_id"], res["pid"]
    # The wrapper, the command's sh and both sleeps: the kill must reach more than the leader.
    wait_members(nvim_clean, pgid, 4)
    assert term(nvim_clean, "kill", tid) == {"ok": True}
    out = wait_exit(nvim_clean, tid)
    assert out["exit_status"] == {"signal": "SIGKILL"}
    wait_group_gone(nvim_clean, pgid)
    # Still valid after the kill.
    assert term(nvim_clean, "output", tid)["ok"] is True


def test_release_kills_and_forgets_but_keeps_the_buffer(nvim_clean: Any) -> None:
    res = term(nvim_clean, "create", {"command": "sh", "args": ["-c", "echo shown; sleep 60"]})
    tid, pgid = res["terminal_id"], res["pid"]
    nvim_clean.exec_lua(
        f"""local id = ...
        vim.wait(5000, function() return {T}.output(id).output ~= "" end, 10)""",
        tid,
    )
    buf = res["bufnr"]
    assert term(nvim_clean, "release", tid) == {"ok": True}
    wait_group_gone(nvim_clean, pgid)
    gone = term(nvim_clean, "output", tid)
    assert gone["ok"] is False and gone["code"] == -32002 and tid in gone["message"]
    assert term(nvim_clean, "kill", tid)["ok"] is False
    assert nvim_clean.api.buf_is_valid(buf)
    assert "shown" in "\n".join(nvim_clean.api.buf_get_lines(buf, 0, -1, False))


def test_kill_all_leaves_no_process(nvim_clean: Any) -> None:
    pgids = []
    for args in (["-c", 'trap "" TERM; sleep 60'], ["-c", "sleep 60 & sleep 60"]):
        res = term(nvim_clean, "create", {"command": "sh", "args": args})
        pgids.append(res["pid"])
    released = term(nvim_clean, "create", {"command": "sh", "args": ["-c", 'trap "" TERM HUP; sleep 60']})
    pgids.append(released["pid"])
    for pgid in pgids:
        wait_members(nvim_clean, pgid, 3)  # the commands run, their traps are set
    term(nvim_clean, "release", released["terminal_id"])
    nvim_clean.exec_lua(f"{T}.kill_all()")
    for pgid in pgids:
        assert group_members(pgid) == []


def test_unknown_ids_and_bad_specs(nvim_clean: Any) -> None:
    for fn in ("output", "kill", "release", "wait_for_exit"):
        res = term(nvim_clean, fn, "no-such-terminal")
        assert res["ok"] is False and res["code"] == -32002 and "no-such-terminal" in res["message"]
    assert term(nvim_clean, "create", {"command": ""})["code"] == -32602
    assert term(nvim_clean, "create", {"command": "true", "cwd": "relative"})["code"] == -32602
    res = term(nvim_clean, "create", {"command": "/nonexistent/program"})
    assert res["ok"] is False and "/nonexistent/program" in res["message"]


def test_open_and_live_output_hook(nvim_clean: Any) -> None:
    nvim_clean.exec_lua(
        """_G.acp_seen = {}
        require('acp_nvim.util.events').on('terminal_output', function(id, data)
          table.insert(_G.acp_seen, data)
        end)"""
    )
    tid = create(nvim_clean, "printf", "live\\n")
    wait_exit(nvim_clean, tid)
    assert "".join(nvim_clean.exec_lua("return _G.acp_seen")) == "live\n"
    res = term(nvim_clean, "open", tid)
    assert res["ok"] is True
    assert nvim_clean.api.win_get_buf(res["winid"]).number == term(nvim_clean, "bufnr", tid)


@pytest.mark.parametrize(
    ("code", "expected"), [(0, {"exit_code": 0}), (1, {"exit_code": 1}), (143, {"signal": "SIGTERM"})]
)
def test_exit_status_mapping(nvim_clean: Any, code: int, expected: dict[str, Any]) -> None:
    # The mapping is the stream module's pure function, the one terminal.lua applies to each exit.
    mapping = "return require('acp_nvim.editor.terminal.stream').exit_status_of(...)"
    status = nvim_clean.exec_lua(mapping, code)
    assert status == expected


def test_chat_preview_keeps_the_last_lines_of_any_chunking(nvim_clean: Any) -> None:
    """The chat's live preview of a terminal shows its last lines (the unfinished one too), however the
    output is cut into chunks: many lines in one chunk, lines across chunks, chunks without a newline."""
    rng = random.Random(7)
    nvim_clean.exec_lua("require('acp_nvim.config').options.chat.terminal_lines = 3")
    for case in range(200):
        text = "".join(rng.choice(["a", "b", " ", "\n", "\n\n"]) for _ in range(rng.randrange(0, 60)))
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randrange(0, 6))))
        chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if b > a]
        tid = f"preview-{case}"
        for chunk in chunks:
            nvim_clean.exec_lua("require('acp_nvim.ui.chat_terminal').on_output(...)", tid, chunk)
        *complete, partial = text.split("\n")
        expected = (complete + ([partial] if partial else []))[-3:]
        got = nvim_clean.exec_lua("return require('acp_nvim.ui.chat_terminal').lines(...)", tid)
        assert got == expected, (chunks, got, expected)
