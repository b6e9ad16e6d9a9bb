--- One terminal's output as the agent reads it: the bytes the job printed, the wrapper's end marker taken out
--- (see `WRAPPER`), "\r\n" folded to "\n", kept to the last `limit` bytes; and its exit status.
local S = {}

local uv = vim.uv

local events = require("acp_nvim.util.events")

local signal_names = {}
for name, num in pairs(uv.constants) do
  if type(num) == "number" and name:match("^SIG%u+$") and not signal_names[num] then
    signal_names[num] = name
  end
end
-- Aliases such as SIGIOT / SIGPOLL share numbers with the usual names; prefer the usual ones.
for num, name in pairs({ [6] = "SIGABRT", [29] = "SIGIO", [17] = "SIGCHLD" }) do
  if uv.constants[name] == num then
    signal_names[num] = name
  end
end

---@param code integer
---@return table
function S.exit_status_of(code)
  if code > 128 and signal_names[code - 128] then
    return { signal = signal_names[code - 128] }
  end
  return { exit_code = code }
end

--- The last `n` bytes of `s` (a character cut in two is the host's to drop: it owns the agent's text).
---@param s string
---@param n integer
---@return string
local function tail(s, n)
  if #s <= n then
    return s
  end
  return s:sub(#s - n + 1)
end

---@param t acp_nvim.Terminal
function S.trim(t)
  local joined = table.concat(t.chunks)
  local kept = tail(joined, t.limit)
  t.chunks = { kept }
  t.size = #kept
end

--- Neovim stops reading a PTY soon after its process ended, and a fast writer can leave more than that in the
--- kernel's buffer: the end of the output (often the part that matters) would be lost. So the command runs
--- under a small sh wrapper that, once the command is done, prints a marker and waits until Neovim, having
--- read everything up to the marker, answers with the token; then it exits with the command's status. Its
--- traps only defer SIGHUP/SIGINT/SIGTERM until the command has ended (a trapped, not ignored, signal is
--- reset for the command itself), so the command sees them as usual. A signal that comes before the command
--- has started (a kill right after create) ends the wrapper as it would have ended the command.
S.WRAPPER = table.concat({
  "t=$1; shift",
  "k=",
  "trap 'k=129' HUP",
  "trap 'k=130' INT",
  "trap 'k=143' TERM",
  '[ -z "$k" ] || exit "$k"',
  '"$@"',
  "s=$?",
  "stty sane -echo 2>/dev/null",
  "printf '\\033]7777;acp-nvim-done;%s\\007' \"$t\"",
  'while IFS= read -r l; do [ "$l" = "$t" ] && break; done',
  "exit $s",
}, "\n")

---@param token string
---@return string
function S.marker_of(token)
  return "\27]7777;acp-nvim-done;" .. token .. "\7"
end

--- Take the wrapper's marker out of the stream; answer it once seen. Returns the bytes that belong to the
--- command's output.
---@param t acp_nvim.Terminal
---@param data string
---@return string
local function take_marker(t, data)
  if t.drained then
    return data
  end
  data = t.carry .. data
  t.carry = ""
  local i, j = data:find(t.marker, 1, true)
  if i then
    t.drained = true
    pcall(vim.fn.chansend, t.job, t.token .. "\n")
    return data:sub(1, i - 1) .. data:sub(j + 1)
  end
  -- Keep a possible beginning of the marker for the next chunk.
  for k = math.max(1, #data - #t.marker + 2), #data do
    if data:byte(k) == 27 and t.marker:sub(1, #data - k + 1) == data:sub(k) then
      t.carry = data:sub(k)
      return data:sub(1, k - 1)
    end
  end
  return data
end

---@param t acp_nvim.Terminal
---@param data string
function S.append(t, data)
  data = take_marker(t, data)
  if t.cr then
    data = "\r" .. data
    t.cr = false
  end
  if data:sub(-1) == "\r" then
    data = data:sub(1, -2)
    t.cr = true
  end
  data = data:gsub("\r\n", "\n")
  if data == "" then
    return
  end
  t.chunks[#t.chunks + 1] = data
  t.size = t.size + #data
  t.total = t.total + #data
  -- Trimming only once `slack` bytes have piled up keeps the cost per byte constant.
  if t.size > t.limit + t.slack then
    S.trim(t)
  end
  events.emit("terminal_output", t.id, data)
end

return S
