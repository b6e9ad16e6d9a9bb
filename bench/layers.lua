-- Neovim's layer clocks for bench/layers.py, loaded after instrument.lua. No product code changes: the chat's
-- entry points are wrapped on their modules' tables, which their callers read at each call.
--
-- Each wrapper reads the process's CPU time (getrusage, user + system) and the clock (vim.uv.hrtime) on entry
-- and exit, and charges its layer less the wrapped layers called inside it (a stack), so that the layers add
-- up. Redraw is bracketed by a decoration provider's on_start and on_end (the screen's update; what Neovim
-- then writes to a UI, ui_flush, is after on_end and stays in "other").

local uv = vim.uv
local L = { cpu = {}, wall = {}, calls = {} }
_G.acp_layers = L

local function cpu_us()
  local r = uv.getrusage()
  return r.utime.sec * 1e6 + r.utime.usec + r.stime.sec * 1e6 + r.stime.usec
end

local stack_cpu, stack_wall = { 0 }, { 0 }

local function charge(layer, cpu, wall)
  local inner_cpu, inner_wall = table.remove(stack_cpu), table.remove(stack_wall)
  stack_cpu[#stack_cpu] = stack_cpu[#stack_cpu] + cpu
  stack_wall[#stack_wall] = stack_wall[#stack_wall] + wall
  L.cpu[layer] = (L.cpu[layer] or 0) + cpu - inner_cpu
  L.wall[layer] = (L.wall[layer] or 0) + wall - inner_wall
  L.calls[layer] = (L.calls[layer] or 0) + 1
end

local function enter()
  stack_cpu[#stack_cpu + 1] = 0
  stack_wall[#stack_wall + 1] = 0
  return cpu_us(), uv.hrtime()
end

local function wrap(layer, fn)
  return function(...)
    local cpu0, wall0 = enter()
    local a, b = fn(...)
    charge(layer, cpu_us() - cpu0, (uv.hrtime() - wall0) / 1e3)
    return a, b
  end
end

local chat = require("acp_nvim.ui.chat")
chat.apply_json = wrap("chat.apply_json (the call)", chat.apply_json)
chat._drain = wrap("chat._drain (draw)", chat._drain)
local highlight = require("acp_nvim.ui.chat_highlight")
highlight.refresh = wrap("highlighting", highlight.refresh)
local parse = require("acp_nvim.ui.chat_highlight.parse")
for _, name in ipairs({ "start_job", "start_captures", "apply_captures" }) do
  parse[name] = wrap("highlighting", parse[name])
end

local started_cpu, started_wall
vim.api.nvim_set_decoration_provider(vim.api.nvim_create_namespace("acp_bench_layers"), {
  on_start = function()
    started_cpu, started_wall = enter()
    return true
  end,
  on_end = function()
    if started_cpu ~= nil then
      charge("redraw", cpu_us() - started_cpu, (uv.hrtime() - started_wall) / 1e3)
      started_cpu = nil
    end
  end,
})

function L.snapshot()
  return { cpu = vim.deepcopy(L.cpu), wall = vim.deepcopy(L.wall), calls = vim.deepcopy(L.calls) }
end
