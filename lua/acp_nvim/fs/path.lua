--- Paths of agent requests: checked, compared by what the file system sees, matched to loaded buffers.
local M = {}

local result = require("acp_nvim.result")

local api = vim.api
local uv = vim.uv

local err = result.err

---@param path string
---@return string
function M.file_uri(path)
  return vim.uri_from_fname(path)
end

--- The path as the file system sees it: the real path when the file (or, for a file not yet there, its
--- nearest existing parent) exists, else the normalized path.
---@param path string
---@return string
function M.identity(path)
  local real = uv.fs_realpath(path)
  if real then
    return real
  end
  local norm = vim.fs.normalize(path)
  local parent, rest = vim.fs.dirname(norm), vim.fs.basename(norm)
  while parent and parent ~= norm do
    local rp = uv.fs_realpath(parent)
    if rp then
      return vim.fs.joinpath(rp, rest)
    end
    local up = vim.fs.dirname(parent)
    if up == parent then
      break
    end
    rest = vim.fs.basename(parent) .. "/" .. rest
    norm, parent = parent, up
  end
  return vim.fs.normalize(path)
end

---@param path any
---@return string?, table?
function M.check_path(path)
  if type(path) ~= "string" or path == "" then
    return nil, err(result.ERR_INVALID_PARAMS, "path must be a non-empty string")
  end
  if path:sub(1, 1) ~= "/" then
    return nil, err(result.ERR_INVALID_PARAMS, ("path must be absolute: %s"):format(path))
  end
  if path:find("\0", 1, true) then
    return nil, err(result.ERR_INVALID_PARAMS, "path contains a NUL byte")
  end
  return vim.fs.normalize(path), nil
end

--- The loaded buffer that holds `path`, if any.
---@param path string
---@return integer?
function M.find_buffer(path)
  local want = M.identity(path)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local name = api.nvim_buf_get_name(buf)
      if name ~= "" and (name == path or M.identity(name) == want) then
        return buf
      end
    end
  end
  return nil
end
return M
