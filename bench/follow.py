"""The agent's own edit of a 1 MB file on disk, followed into its buffer and into the review (issue 14).

The flood agent (`disk_edit PATH LINE`) reports a tool call naming the file, changes one line on disk and
completes the call, stamping the wall clock just before it sends "completed"; inside Neovim the bench wraps
`fs.follow_disk.apply` (the Lua entry point the host calls) and stamps the wall clock when it returns, the
buffer updated and the hunk recorded for review. Floor: Neovim's own reload of the same kind of change
(`:checktime` of the buffer with 'autoread'), which keeps no undo step of its own, no marks and no review.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from bench.harness import Neovim, Result, median, ms, wait_until

TARGET_S = 0.050

# Stamps the end of every follow (the wall clock: the agent's stamp is time.time() in another process).
WRAP_APPLY = """
local follow_disk = require("acp_nvim.editor.fs.follow_disk")
local apply = follow_disk.apply
acp_bench.follows = {}
follow_disk.apply = function(...)
  apply(...)
  local sec, usec = vim.uv.gettimeofday()
  table.insert(acp_bench.follows, sec + usec / 1e6)
end
"""

# Neovim's own reload: the file changed behind the clean buffer, `:checktime` with 'autoread' reloads it.
RELOAD = """
local buf = ...
vim.bo[buf].autoread = true
local t0 = vim.uv.hrtime()
vim.cmd("checktime " .. buf)
return (vim.uv.hrtime() - t0) / 1e9
"""


# What the start and end of a turn cost Neovim: watching the loaded buffers' folders and keeping the disk's
# text of the modified ones (the base of a merge for an edit no tool call names), then the last look (a stat
# per buffer) and unwatching.
WATCH_COST = """
local root, count, modified = ...
local disk_watch = require("acp_nvim.editor.fs.disk_watch")
for i = 1, count do
  local buf = vim.fn.bufadd(("%s/watched-%03d.txt"):format(root, i))
  vim.bo[buf].swapfile = false
  vim.fn.bufload(buf)
  if i <= modified then
    vim.api.nvim_buf_set_lines(buf, 0, 1, false, { "an unsaved edit" })
  end
end
local t0 = vim.uv.hrtime()
disk_watch.watch("bench-watch", { root })
local t1 = vim.uv.hrtime()
disk_watch.unwatch("bench-watch")
local t2 = vim.uv.hrtime()
return { (t1 - t0) / 1e9, (t2 - t1) / 1e9 }
"""
WATCHED_BUFFERS = 100
WATCHED_MODIFIED = 20


class Config(Protocol):
    quick: bool
    runs: int

    def size(self, full: int, quick: int) -> int: ...

    def workdir(self, name: str) -> Path: ...


def _numbered_file(path: Path, size: int) -> int:
    """About `size` bytes of distinct 100-byte lines (a diff must find the one changed); the line count."""
    count = max(1, size // 100)
    path.write_text("".join(f"{i:08d} {'x' * 90}\n" for i in range(count)), encoding="utf-8")
    return count


def _reports(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [e for e in entries if e.get("show") == "disk_edit"]


def disk_follow(config: Config) -> Result:
    result = Result("follow")
    workdir = config.workdir("follow")
    big = workdir / "big.txt"
    count = _numbered_file(big, config.size(1024 * 1024, 50 * 1024))
    nv = Neovim(workdir)
    judged = not config.quick
    report = workdir / "report.jsonl"
    try:
        nv.start_agent()
        nv.api.command(f"edit {big}")
        buf = int(nv.api.current.buffer.number)
        nv.lua(WRAP_APPLY)
        latencies: list[float] = []
        for run in range(config.runs):
            line = count // 2 + run
            follows = len(nv.lua("return acp_bench.follows"))
            nv.api.command(f"AcpPrompt disk_edit {big} {line}")
            wait_until(lambda r=run: len(_reports(report)) > r, 60, "the agent's edit")  # type: ignore[misc]
            wait_until(lambda f=follows: len(nv.lua("return acp_bench.follows")) > f, 60, "the follow")  # type: ignore[misc]
            nv.wait_state("ready", 60)
            text = nv.lua(
                "local b, l = ...; return vim.api.nvim_buf_get_lines(b, l, l + 1, false)[1]", buf, line - 1
            )
            assert text.endswith("(changed by the agent on disk)"), text
            hunks = nv.lua("return #require('acp_nvim.editor.review').hunks()")
            assert hunks == 1, f"{hunks} review hunks"
            latencies.append(
                nv.lua("return acp_bench.follows[#acp_bench.follows]") - _reports(report)[-1]["completed_at"]
            )
            nv.lua("require('acp_nvim.editor.review').accept_all()")
        watched = workdir / "watched"
        watched.mkdir()
        for i in range(1, WATCHED_BUFFERS + 1):
            _numbered_file(watched / f"watched-{i:03d}.txt", config.size(100 * 1024, 2 * 1024))
        start_s, end_s = nv.lua(WATCH_COST, str(watched), WATCHED_BUFFERS, WATCHED_MODIFIED)
        result.figures[
            f"turn start, {WATCHED_BUFFERS} loaded buffers ({WATCHED_MODIFIED} modified) of "
            f"{config.size(100, 2)} KB watched"
        ] = f"{ms(start_s)} (disk text of the modified ones kept); turn end: {ms(end_s)}"
        reloads: list[float] = []
        for run in range(config.runs):
            lines = big.read_text(encoding="utf-8").split("\n")
            lines[count // 3 + run] += " (changed behind the buffer)"
            big.write_text("\n".join(lines), encoding="utf-8")
            reloads.append(float(nv.lua(RELOAD, buf)))
        took, base = median(latencies), median(reloads)
        size = big.stat().st_size / 1048576
        label = f"{size:.2f} MiB file, one line changed on disk: completed -> buffer, review"
        result.figures[label] = f"{ms(took)} (floor :checktime reload {ms(base)}, ratio {took / base:.2f}x)"
        result.judge(f"followed within {ms(TARGET_S)} ({ms(took)})", took < TARGET_S, judged)
        result.notes.append(
            "from the agent's clock just before it sends the tool call's `completed` to the end of the Lua "
            "call that updated the buffer (one undo step, marks kept) and recorded the review hunk"
        )
    finally:
        nv.close()
    return result
