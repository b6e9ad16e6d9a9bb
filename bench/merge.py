"""The three-way merge benchmark (issue 14): merging an agent's edit into a 1 MB buffer with unsaved edits
(`lua/acp_nvim/editor/fs/merge.lua`) against one `vim.diff` over the same texts, timed inside Neovim in one
run."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

import pynvim

from bench.harness import Neovim, Result, median, ms

if TYPE_CHECKING:
    from bench.suite import Config

# Times, in one Neovim: the floor (one vim.diff of base and theirs, the texts already joined, as a plain diff
# of the agent's edit would cost), merge3 on the three line lists, and apply_to_buffer on a loaded buffer
# (buffer lines read, merged, applied as one undo step). `scattered_user`: the user's edits spread over the
# whole file too, the worst case for the unchanged head and tail that each side's diff skips.
MERGE_BENCH_LUA = r"""
local size, runs, scattered_user, workdir = ...
local line = ("0123456789 abcdefghijklmnopqrstuvwxyz "):rep(2) .. "lorem ipsum dolor sit amet"
local count = math.max(2000, math.floor(size / (#line + 1)))
local base = {}
for i = 1, count do
  base[i] = line .. " " .. i
end
local ours, theirs = vim.list_slice(base), vim.list_slice(base)
-- The agent edits 50 places across the file, adding a line at each (so its side goes through xdiff); the
-- user has unsaved edits of a few other lines, or, scattered, adds lines in 50 places too.
for k = 50, 1, -1 do
  local i = math.floor(k * count / 51)
  theirs[i] = theirs[i] .. " (agent)"
  table.insert(theirs, i + 1, "added by the agent " .. k)
end
local user = scattered_user and 50 or 3
for k = user, 1, -1 do
  local i = math.floor(k * count / (user + 1)) + 3
  ours[i] = ours[i] .. " (user)"
  if scattered_user then
    table.insert(ours, i + 1, "added by the user " .. k)
  end
end
local base_text = table.concat(base, "\n") .. "\n"
local theirs_text = table.concat(theirs, "\n") .. "\n"
local merge = require("acp_nvim.editor.fs.merge")
local floor, merged, applied = {}, {}, {}
local conflicts
for _ = 1, runs do
  -- Each timing starts with no garbage left by the one before.
  collectgarbage()
  local t0 = vim.uv.hrtime()
  vim.diff(base_text, theirs_text, { result_type = "indices" })
  floor[#floor + 1] = vim.uv.hrtime() - t0
  collectgarbage()
  t0 = vim.uv.hrtime()
  local r = merge.merge3(base, ours, theirs)
  merged[#merged + 1] = vim.uv.hrtime() - t0
  conflicts = #r.conflicts
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, ours)
  collectgarbage()
  t0 = vim.uv.hrtime()
  local res = merge.apply_to_buffer(buf, base, theirs)
  applied[#applied + 1] = vim.uv.hrtime() - t0
  assert(res.conflicts == 0 and #res.lines == count + 50 + (scattered_user and 50 or 0), "unexpected merge")
  vim.api.nvim_buf_delete(buf, { force = true })
end
-- The whole fs/write_text_file path onto the buffer of a real file with those unsaved edits: the disk read
-- for the base, the merge, the disk write of the agent's text and the stamps taken.
local path = workdir .. "/merged.txt"
local written = {}
for _ = 1, runs do
  local out = assert(io.open(path, "wb"))
  out:write(base_text)
  out:close()
  vim.cmd("silent! bwipeout! " .. vim.fn.fnameescape(path))
  vim.cmd("silent edit " .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, ours)
  collectgarbage()
  local t0 = vim.uv.hrtime()
  local res = require("acp_nvim.editor.fs").write(path, theirs_text, {})
  written[#written + 1] = vim.uv.hrtime() - t0
  assert(res.ok and res.conflicts == 0, "unexpected write")
  vim.cmd("silent! bwipeout! " .. vim.fn.fnameescape(path))
end
return {
  floor = floor,
  merged = merged,
  applied = applied,
  written = written,
  bytes = #base_text,
  conflicts = conflicts,
}
"""


# An agent's fs/write_text_file onto the buffer of a 100,000-line file, one line in 50 places changed by the
# agent, with or without 3 unsaved lines of the user's: the whole Lua path (disk read, merge, write, stamps).
BIG_WRITE_LUA = r"""
local path, count, unsaved = ...
local base = {}
for i = 1, count do
  base[i] = "line " .. i .. " of a long file, with some words on it"
end
local out = assert(io.open(path, "wb"))
out:write(table.concat(base, "\n") .. "\n")
out:close()
vim.cmd("silent! bwipeout! " .. vim.fn.fnameescape(path))
vim.cmd("silent edit " .. vim.fn.fnameescape(path))
local buf = vim.api.nvim_get_current_buf()
if unsaved then
  for k = 1, 3 do
    local i = math.floor(k * count / 4) + 3
    vim.api.nvim_buf_set_lines(buf, i - 1, i, false, { base[i] .. " (user)" })
  end
end
local theirs = vim.list_slice(base)
for k = 1, 50 do
  local i = math.floor(k * count / 51)
  theirs[i] = theirs[i] .. " (agent)"
end
_G.acp_bench_big = table.concat(theirs, "\n") .. "\n"
"""
BIG_WRITE_RUN = r"""
local t0 = vim.uv.hrtime()
local res = require("acp_nvim.editor.fs").write(..., _G.acp_bench_big, {})
assert(res.ok, vim.inspect(res))
return vim.uv.hrtime() - t0
"""


def _worst_round_trip(nv: Neovim, path: str, unsaved: bool) -> tuple[float, float]:
    """The 100,000-line write's time in Neovim, and the worst `nvim_eval("1")` round trip a second client
    (as a user's UI would) saw during it."""
    nv.lua(BIG_WRITE_LUA, path, 100_000, unsaved)
    trips: list[float] = []
    stop = threading.Event()
    ready = threading.Event()

    def probe() -> None:
        client = pynvim.attach("socket", path=nv.socket)
        ready.set()
        while not stop.is_set():
            sent = time.monotonic()
            client.eval("1")
            trips.append(time.monotonic() - sent)
            time.sleep(0.002)
        client.close()

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    ready.wait(10)
    time.sleep(0.05)
    took = float(nv.lua(BIG_WRITE_RUN, path)) / 1e9
    time.sleep(0.05)
    stop.set()
    thread.join(10)
    return took, max(trips, default=0.0)


def _seconds(ns: list[Any]) -> float:
    return median([float(x) / 1e9 for x in ns])


def merge(config: Config) -> Result:
    result = Result("merge")
    workdir = config.workdir("merge")
    nv = Neovim(workdir)
    judged = not config.quick
    size = config.size(1024 * 1024, 20 * 1024)
    try:
        for label, scattered in (("user changed 3 lines", False), ("user added lines in 50 places", True)):
            got = nv.lua(MERGE_BENCH_LUA, size, config.runs, scattered, str(workdir))
            floor_s, merge_s, apply_s = (
                _seconds(got["floor"]),
                _seconds(got["merged"]),
                _seconds(got["applied"]),
            )
            kib = got["bytes"] // 1024
            result.figures[f"merge3 {kib} KiB, {label}"] = (
                f"{ms(merge_s)} (vim.diff {ms(floor_s)}, ratio {merge_s / floor_s:.2f}x)"
            )
            result.figures[f"apply_to_buffer {kib} KiB, {label}"] = (
                f"{ms(apply_s)} (ratio {apply_s / floor_s:.2f}x)"
            )
            write_s = _seconds(got["written"])
            result.figures[f"fs.write onto the unsaved buffer {kib} KiB, {label}"] = (
                f"{ms(write_s)} (ratio {write_s / floor_s:.2f}x)"
            )
            if not scattered:
                result.judge(
                    f"merge3 of a 1 MB buffer within 2x vim.diff ({merge_s / floor_s:.2f}x)",
                    merge_s <= 2 * floor_s,
                    judged,
                )
        if not config.quick:
            big = str(workdir / "big.txt")
            for label, unsaved in (("with 3 unsaved lines", True), ("onto a clean buffer", False)):
                took, worst = _worst_round_trip(nv, big, unsaved)
                result.figures[f"fs.write of 100,000 lines {label}: worst round trip"] = (
                    f"{ms(worst)} (the write {ms(took)})"
                )
                result.judge(f"100,000-line write {label}: worst round trip <= 100 ms", worst <= 0.1, judged)
        result.notes.append(
            "floor: one vim.diff (indices) of the file and the agent's text, already joined; merge3: both "
            "sides diffed against the file and merged, from line lists; apply_to_buffer: also reads the "
            "buffer, applies the result as one undo step and takes the file's stamps (no file here); "
            "fs.write: the whole fs/write_text_file path onto a real file's buffer (disk read, merge, "
            "atomic write, stamps)"
        )
    finally:
        nv.close()
    return result
