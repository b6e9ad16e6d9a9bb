--- The buffer-local mappings of the review (editor/review.lua), set while a buffer has hunks: next / previous
--- hunk, accept / reject the hunk under the cursor, accept / reject every hunk of the buffer (a reject asks for
--- a reason), comment on the hunk (or, in Visual mode, on the lines selected).
local M = {}

local api = vim.api
local store = require("acp_nvim.editor.review.store")

local keymap_names =
  { "next_hunk", "prev_hunk", "accept_hunk", "reject_hunk", "accept_file", "reject_file", "comment" }
local keymap_desc = {
  next_hunk = "ACP: next agent hunk",
  prev_hunk = "ACP: previous agent hunk",
  accept_hunk = "ACP: accept agent hunk",
  reject_hunk = "ACP: reject agent hunk",
  accept_file = "ACP: accept agent edits in file",
  reject_file = "ACP: reject agent edits in file",
  comment = "ACP: comment on the agent's change",
}
--- The action a key runs, where it is not the function of its own name: the keys ask for a reason before
--- rejecting.
local key_action = { reject_hunk = "reject_hunk_asking", reject_file = "reject_file_asking" }
--- Keys that work in Visual mode too (on the lines selected).
local visual = { comment = true }

---@type table<integer, table<string, string>>
local mapped = {}

--- Maps the keys of `buf` while it has hunks and unmaps them once it has none. A key runs the function of
--- its name in `actions` (the review's module, looked up when the key is pressed).
---@param buf integer
---@param actions table<string, function>
function M.update(buf, actions)
  if not api.nvim_buf_is_valid(buf) then
    mapped[buf] = nil
    return
  end
  if store.buf_has_hunks(buf) then
    if mapped[buf] then
      return
    end
    mapped[buf] = {}
    local keymaps = require("acp_nvim.config").options.review.keymaps
    for _, name in ipairs(keymap_names) do
      local lhs = keymaps[name]
      if lhs then
        vim.keymap.set(visual[name] and { "n", "x" } or "n", lhs, function()
          actions[key_action[name] or name]()
        end, { buffer = buf, desc = keymap_desc[name], nowait = true })
        mapped[buf][name] = lhs
      end
    end
  elseif mapped[buf] then
    for _, lhs in pairs(mapped[buf]) do
      pcall(vim.keymap.del, "n", lhs, { buffer = buf })
      pcall(vim.keymap.del, "x", lhs, { buffer = buf })
    end
    mapped[buf] = nil
  end
end

--- A wiped-out buffer's mappings went with it.
---@param buf integer
function M.wiped(buf)
  mapped[buf] = nil
end

return M
