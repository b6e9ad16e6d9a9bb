--- Frees the Vimscript lists that job output callbacks leave behind, while the output still floods in.
---
--- Neovim hands every `on_stdout` call a fresh Vimscript list and keeps a reference to it that only
--- Vimscript's garbage collector drops (Neovim #10795). That collector runs only after Neovim has waited
--- 'updatetime' for a key, which never happens while a command floods a terminal: Neovim grows about 2 MiB
--- per MiB printed. Callbacks report what they received with `M.owe(bytes)`; once `M.threshold` bytes are
--- owed, the next safe moment collects. Safe moments are SafeState and, in Terminal mode (which never
--- triggers SafeState), TextChangedT.
---
--- A collection frees every list no variable reaches, so it must not run while C code holds one in the
--- middle of an evaluation: inside input() or the command line, a mapping, :normal or feedkeys(), a
--- callback, the cmdline window. Only plain Normal, Insert or Terminal mode with nothing pending (`state()`)
--- qualifies, which is where Neovim collects on its own: at the top level, before blocking for a key.
local M = {}

--- Bytes owed before a collection is worth its walk over every Vimscript value.
M.threshold = 4 * 1024 * 1024
--- Collections done so far (for tests and benchmarks).
M.collections = 0

local owed = 0
local watching = false

local top_level_modes = { n = true, i = true, t = true }

---@return boolean
local function safe_to_collect()
  return top_level_modes[vim.fn.mode(1)] == true
    and vim.fn.getcmdwintype() == ""
    and not vim.fn.state():find("[moawc]")
end

local function collect()
  if owed < M.threshold or not safe_to_collect() then
    return
  end
  owed = 0
  -- test_garbagecollect_now() is the only way to collect now rather than at the next wait for a key; it
  -- refuses to run unless v:testing is set.
  local testing = vim.v.testing
  vim.v.testing = 1
  local ok = pcall(vim.fn.test_garbagecollect_now)
  vim.v.testing = testing
  if ok then
    M.collections = M.collections + 1
  end
end

--- Count `bytes` of output a job callback was handed as a Vimscript list.
---@param bytes integer
function M.owe(bytes)
  owed = owed + bytes
  if not watching then
    watching = true
    vim.api.nvim_create_autocmd({ "SafeState", "TextChangedT" }, {
      group = vim.api.nvim_create_augroup("acp_nvim_garbage", { clear = true }),
      callback = collect,
    })
  end
end

return M
