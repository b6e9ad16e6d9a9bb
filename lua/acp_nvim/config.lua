-- Options: the defaults (one commented table), the built-in agent presets, and validation that names the
-- offending field instead of throwing.

local M = {}

---@class AcpAgentConfig
---@field cmd string executable (looked up on PATH)
---@field args? string[]
---@field env? table<string, string>
---@field install_hint? string shown when the command is not found
---@field fallbacks? string[] presets only: older executables started when `cmd` is not installed
---@field older_args? {before: string, args: string[], package: string} presets only: `args` for versions
---  older than `before` (read from the npm `package`'s package.json, else from `cmd --version`)

M.defaults = {
  -- Interpreter that has pynvim, msgspec and anyio. nil: the plugin's private environment made by the build
  -- step (stdpath("data")/acp_nvim/venv). g:python3_host_prog is never used or changed.
  python = nil,
  -- Start the Python host in the background ahead of the first command, so that :AcpStart does not wait the
  -- ~0.2-0.3 s Python takes to start; the price is a host process (~30 MiB) in each such Neovim. "auto": once a
  -- UI is attached (never in a headless Neovim); true: as soon as Neovim has started; false: only when needed
  -- (typing an :Acp command still starts it early).
  prestart_host = "auto",
  -- Agent that :AcpStart starts when no name is given; nil: :AcpStart asks (vim.ui.select) among the
  -- configured agents and the ACP Registry's.
  default_agent = nil,
  -- Your agents, merged over the presets below: { name = { cmd = "...", args = {...}, env = {...} } }.
  agents = {},
  -- Seconds the agent has to answer `initialize`.
  handshake_timeout = 30,
  log = {
    -- Log file of the Python side; nil: $ACP_NVIM_LOG, else stdpath("log")/acp_nvim.log.
    file = nil,
    -- Least severe level written: "debug" (every stderr line of the agent too), "info", "warn", "error".
    level = "info",
  },
  chat = {
    -- Where :AcpChat opens the chat: "right", "left", "bottom" or "current" (the current window).
    position = "right",
    -- Columns of a "right"/"left" chat; lines of a "bottom" chat.
    width = 80,
    height = 20,
    -- Lines of the prompt window under the chat.
    prompt_height = 5,
    -- Open the chat as soon as a session starts.
    open_on_start = true,
    -- Fold the agent's thoughts (zo opens one).
    fold_thoughts = true,
    -- Lines of a running command's output shown under its tool call.
    terminal_lines = 8,
    -- Size (bytes) of a chat past which its markdown highlighting is turned off: Neovim re-parses the whole
    -- markdown document on every streamed change, longer than a frame past ~64 KiB.
    highlight_max_bytes = 64 * 1024,
    -- Length (bytes) of a line past which the chat's windows turn 'linebreak' off: with it, Neovim measures
    -- such a line cell by cell on every redraw.
    long_line_bytes = 32 * 1024,
  },
  -- What the agent may do through Neovim. A capability turned off is not advertised to the agent.
  capabilities = {
    fs_read = true, -- fs/read_text_file: reads see unsaved buffer text
    fs_write = true, -- fs/write_text_file: writes go through buffers, reviewable with :AcpReview
    terminal = true, -- terminal/*: commands run in Neovim terminals
  },
  fs = {
    -- Largest file (bytes) the agent may read.
    max_read_bytes = 10 * 1024 * 1024,
    -- Largest file (bytes) an agent's write loads into a hidden buffer when no buffer holds it (that buffer
    -- is what :AcpReview reviews). A larger write goes straight to disk: not reviewable, but it never holds
    -- Neovim while a huge file is loaded.
    max_buffer_bytes = 4 * 1024 * 1024,
    -- Run BufWritePre/BufWritePost autocommands (formatters) on the agent's writes.
    autocmds = false,
  },
  -- Paths the agent may touch. Inside the session's cwd: allowed. Outside: "ask" (vim.ui.select: allow once,
  -- always for this path, deny; refused when Neovim has no UI to ask), "deny" or "allow". `allow` / `deny`
  -- are paths (a folder covers everything under it) that override this.
  sandbox = {
    outside = "ask",
    allow = {},
    deny = {},
  },
  -- Show the file the agent reads or writes in the last non-chat window.
  follow = false,
  -- MCP servers every session gets: { name = "x", command = "/abs/path", args = {...}, env = {K = "v"} } (stdio),
  -- or { type = "http" | "sse", name = "x", url = "...", headers = {K = "v"} } (only to agents that support it).
  mcp_servers = {},
  -- Directories besides the cwd sessions may use (sent only to agents that support it); :AcpAddDir adds one.
  additional_directories = {},
  sessions = {
    -- :AcpSessions opens a stored session with session/resume (no history) even when it could load it.
    prefer_resume = false,
  },
  auth = {
    -- Offer the agents' terminal login methods (advertises auth.terminal).
    terminal = true,
  },
  keymaps = {
    -- Prompt window: send in normal mode / in insert mode, cancel the turn, walk the prompt history.
    send = "<CR>",
    send_insert = "<C-s>",
    cancel = "<C-c>",
    history_prev = "<Up>",
    history_next = "<Down>",
  },
  review = {
    -- Buffer-local mappings while a buffer has agent hunks (:AcpReview); false leaves that key unmapped.
    keymaps = {
      next_hunk = "]h",
      prev_hunk = "[h",
      accept_hunk = "<leader>aa",
      reject_hunk = "<leader>ar",
      accept_file = "<leader>aA",
      reject_file = "<leader>aR",
    },
  },
  -- [registry] The ACP Registry (issue 16): its agents are started by id with :AcpStart {id}.
  registry = {
    -- Where the list comes from: https://, a loopback http://, a file:// URL or a local path.
    url = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json",
    -- Seconds after which the cached list (stdpath("cache")/acp_nvim/registry.json) is fetched again.
    max_age = 24 * 60 * 60,
    -- false: no registry agents (nothing is fetched).
    enabled = true,
  },
  conflict = {
    -- Buffer-local mappings while a buffer has merge conflicts (:AcpConflict); false leaves that key unmapped
    -- (e.g. where vim-unimpaired's ]x/[x are wanted).
    keymaps = {
      next = "]x",
      prev = "[x",
    },
  },
}

-- Known ACP agents. Each can be overridden (or disabled with `false`) in opts.agents. The host picks among
-- `fallbacks` and `older_args` when it starts one (the choice needs the disk and a process: not on this loop).
M.presets = {
  claude = {
    cmd = "claude-agent-acp",
    -- The agent's name until its 0.18 (npm @zed-industries/claude-code-acp), still installed by many.
    fallbacks = { "claude-code-acp" },
    install_hint = "npm install -g @agentclientprotocol/claude-agent-acp",
  },
  gemini = {
    cmd = "gemini",
    args = { "--acp" },
    -- `--acp` is new in 0.33.0; later versions call `--experimental-acp` deprecated.
    older_args = { before = "0.33.0", args = { "--experimental-acp" }, package = "@google/gemini-cli" },
    install_hint = "npm install -g @google/gemini-cli",
  },
  copilot = {
    cmd = "copilot",
    args = { "--acp" },
    install_hint = "npm install -g @github/copilot",
  },
  auggie = {
    cmd = "auggie",
    args = { "--acp" },
    install_hint = "npm install -g @augmentcode/auggie",
  },
  cline = {
    cmd = "cline",
    args = { "--acp" },
    install_hint = "npm install -g cline",
  },
  qwen = {
    cmd = "qwen",
    args = { "--acp" },
    install_hint = "npm install -g @qwen-code/qwen-code",
  },
  codex = {
    cmd = "codex-acp",
    install_hint = "npm install -g @zed-industries/codex-acp",
  },
  goose = {
    cmd = "goose",
    args = { "acp" },
    install_hint = "see https://block.github.io/goose/docs/getting-started/installation",
  },
  opencode = {
    cmd = "opencode",
    args = { "acp" },
    install_hint = "npm install -g opencode-ai",
  },
  ["fast-agent"] = {
    cmd = "fast-agent-acp",
    install_hint = "uv tool install fast-agent-mcp",
  },
  -- The offline demo agent shipped with the plugin; `cmd` is filled in with the plugin's Python.
  demo = {
    cmd = "",
    args = { "-m", "acp_nvim.agents.demo" },
    install_hint = "it ships with acp.nvim: run the build step (:lua require('acp_nvim.build').run())",
  },
}

---@type table
M.options = vim.deepcopy(M.defaults)

-- Type rules: a string names a type (suffix "?" = may be nil), a list enumerates allowed values, a table is a
-- nested group of rules.
local rules = {
  python = "string?",
  prestart_host = { "auto", true, false },
  default_agent = "string?",
  agents = "agents",
  handshake_timeout = "number",
  log = {
    file = "string?",
    level = { "debug", "info", "warn", "error" },
  },
  chat = {
    position = { "right", "left", "bottom", "current" },
    width = "number",
    height = "number",
    prompt_height = "number",
    open_on_start = "boolean",
    fold_thoughts = "boolean",
    terminal_lines = "number",
    highlight_max_bytes = "number",
    long_line_bytes = "number",
  },
  capabilities = {
    fs_read = "boolean",
    fs_write = "boolean",
    terminal = "boolean",
  },
  fs = {
    max_read_bytes = "number",
    max_buffer_bytes = "number",
    autocmds = "boolean",
  },
  sandbox = {
    outside = { "ask", "deny", "allow" },
    allow = "string[]",
    deny = "string[]",
  },
  follow = "boolean",
  mcp_servers = "mcp[]",
  additional_directories = "string[]",
  sessions = {
    prefer_resume = "boolean",
  },
  auth = {
    terminal = "boolean",
  },
  keymaps = {
    send = "string",
    send_insert = "string",
    cancel = "string",
    history_prev = "string",
    history_next = "string",
  },
  review = {
    keymaps = {
      next_hunk = "key",
      prev_hunk = "key",
      accept_hunk = "key",
      reject_hunk = "key",
      accept_file = "key",
      reject_file = "key",
    },
  },
  -- [registry] issue 16
  registry = {
    url = "string",
    max_age = "number",
    enabled = "boolean",
  },
  conflict = {
    keymaps = {
      next = "key",
      prev = "key",
    },
  },
}

local agent_rules = {
  cmd = "string",
  args = "string[]",
  env = "string{}",
  install_hint = "string",
  mode = "string",
  config = "config{}",
}

---@param value any
---@param rule string
---@return boolean
local function has_type(value, rule)
  if rule == "string[]" then
    if type(value) ~= "table" then
      return false
    end
    for k, v in pairs(value) do
      if type(k) ~= "number" or type(v) ~= "string" then
        return false
      end
    end
    return true
  elseif rule == "config{}" then
    if type(value) ~= "table" then
      return false
    end
    for k, v in pairs(value) do
      if type(k) ~= "string" or (type(v) ~= "string" and type(v) ~= "boolean") then
        return false
      end
    end
    return true
  elseif rule == "mcp[]" then
    if type(value) ~= "table" then
      return false
    end
    for k, v in pairs(value) do
      if type(k) ~= "number" or type(v) ~= "table" or type(v.name) ~= "string" then
        return false
      end
      local kind = v.type or "stdio"
      if kind == "stdio" then
        if type(v.command) ~= "string" then
          return false
        end
      elseif (kind ~= "http" and kind ~= "sse") or type(v.url) ~= "string" then
        return false
      end
    end
    return true
  elseif rule == "key" then
    return value == false or (type(value) == "string" and value ~= "")
  elseif rule == "string{}" then
    if type(value) ~= "table" then
      return false
    end
    for k, v in pairs(value) do
      if type(k) ~= "string" or type(v) ~= "string" then
        return false
      end
    end
    return true
  end
  return type(value) == rule:gsub("%?$", "")
end

---@param rule string
---@return string
local function describe(rule)
  return ({
    ["string[]"] = "a list of strings",
    ["string{}"] = "a table of strings",
    ["string?"] = "a string",
    ["key"] = "a key (a non-empty string) or false",
    ["config{}"] = "a table of option id = string or boolean",
    ["mcp[]"] = "a list of MCP servers ({name, command} or {type = 'http'|'sse', name, url})",
  })[rule] or ("a " .. rule)
end

---@param opts table
---@param errors string[]
---@return table valid agents only
local function check_agents(opts, errors)
  local valid = {}
  for name, agent in pairs(opts) do
    local field = "agents." .. tostring(name)
    if type(name) ~= "string" then
      table.insert(errors, ("`%s`: agent names must be strings"):format(field))
    elseif agent == false then
      valid[name] = false
    elseif type(agent) ~= "table" then
      table.insert(errors, ("`%s` must be a table, got %s"):format(field, type(agent)))
    else
      local ok = true
      for key, value in pairs(agent) do
        local rule = agent_rules[key]
        if rule == nil then
          table.insert(errors, ("unknown option `%s.%s`"):format(field, tostring(key)))
          ok = false
        elseif not has_type(value, rule) then
          table.insert(errors, ("`%s.%s` must be %s, got %s"):format(field, key, describe(rule), type(value)))
          ok = false
        end
      end
      if agent.cmd == nil and M.presets[name] == nil then
        table.insert(errors, ("`%s.cmd` is required"):format(field))
        ok = false
      end
      if ok then
        valid[name] = agent
      end
    end
  end
  return valid
end

---@param opts table
---@param group table rules
---@param prefix string
---@param errors string[]
---@return table valid options only
local function check(opts, group, prefix, errors)
  local valid = {}
  for key, value in pairs(opts) do
    local field = prefix .. tostring(key)
    local rule = group[key]
    if rule == nil then
      table.insert(errors, ("unknown option `%s`"):format(field))
    elseif rule == "agents" then
      if type(value) ~= "table" then
        table.insert(errors, ("`%s` must be a table, got %s"):format(field, type(value)))
      else
        valid[key] = check_agents(value, errors)
      end
    elseif type(rule) == "table" and rule[1] ~= nil then
      if not vim.tbl_contains(rule, value) then
        local allowed = table.concat(vim.tbl_map(vim.inspect, rule), ", ")
        table.insert(errors, ("`%s` must be one of %s, got %s"):format(field, allowed, vim.inspect(value)))
      else
        valid[key] = value
      end
    elseif type(rule) == "table" then
      if type(value) ~= "table" then
        table.insert(errors, ("`%s` must be a table, got %s"):format(field, type(value)))
      else
        valid[key] = check(value, rule, field .. ".", errors)
      end
    elseif not has_type(value, rule) then
      table.insert(errors, ("`%s` must be %s, got %s"):format(field, describe(rule), type(value)))
    else
      valid[key] = value
    end
  end
  return valid
end

--- Validates `opts` and stores the merged options. Invalid fields are left at their defaults.
---@param opts table|nil
---@return string[] errors one message per offending field
function M.apply(opts)
  local errors = {}
  if opts ~= nil and type(opts) ~= "table" then
    table.insert(errors, ("setup() takes a table, got %s"):format(type(opts)))
    opts = {}
  end
  local valid = check(opts or {}, rules, "", errors)
  table.sort(errors)
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), valid)
  -- Agents are replaced per name, not merged list-wise: `args` of an override replaces the preset's.
  M.options.agents = valid.agents or {}
  return errors
end

--- The interpreter that runs the host (and the demo agent).
---@return string
function M.python()
  if M.options.python then
    return vim.fn.expand(M.options.python)
  end
  local venv = vim.fs.joinpath(vim.fn.stdpath("data"), "acp_nvim", "venv")
  if vim.fn.has("win32") == 1 then
    return vim.fs.joinpath(venv, "Scripts", "python.exe")
  end
  return vim.fs.joinpath(venv, "bin", "python")
end

--- Every agent name: presets and the user's, minus the disabled ones.
---@return string[]
function M.agent_names()
  local names = {}
  for name in pairs(M.presets) do
    if M.options.agents[name] ~= false then
      table.insert(names, name)
    end
  end
  for name, agent in pairs(M.options.agents) do
    if agent ~= false and M.presets[name] == nil then
      table.insert(names, name)
    end
  end
  table.sort(names)
  return names
end

--- The agent `name` with its preset filled in, or nil and why.
---@param name string
---@return AcpAgentConfig|nil, string|nil
function M.agent(name)
  local user = M.options.agents[name]
  local preset = M.presets[name]
  if user == false or (user == nil and preset == nil) then
    local known = table.concat(M.agent_names(), ", ")
    return nil, ("unknown agent %q (known: %s)"):format(name, known)
  end
  local agent = vim.tbl_extend("force", vim.deepcopy(preset or {}), user or {})
  if user ~= nil and (user.cmd ~= nil or user.args ~= nil) then
    -- The user's own command line is run as written.
    agent.fallbacks, agent.older_args = nil, nil
  end
  agent.args = agent.args or {}
  agent.env = agent.env or {}
  if name == "demo" and agent.cmd == "" then
    agent.cmd = M.python()
    -- The demo agent is part of this plugin: make it importable from the source tree too.
    agent.env = vim.tbl_extend("keep", agent.env, { PYTHONPATH = require("acp_nvim.host").pythonpath() })
  end
  return agent
end

--- Where the Python side logs.
---@return string
function M.log_file()
  return (M.options.log or {}).file
    or vim.env.ACP_NVIM_LOG
    or vim.fs.joinpath(vim.fn.stdpath("log") --[[@as string]], "acp_nvim.log")
end

--- The least severe level the Python side logs.
---@return string
function M.log_level()
  return (M.options.log or {}).level or "info"
end

return M
