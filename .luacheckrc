-- luacheck's configuration for the plugin's Lua; scripts/test runs `luacheck .` from the repository root.
-- Neovim runs LuaJIT: Lua 5.1 with a few extensions (`bit`, `jit`, ...).
std = "luajit"
-- `vim` is Neovim's API; some of its fields (`vim.b`, `vim.wo`, `vim.g`, ...) are meant to be assigned.
globals = { "vim" }
-- Methods whose signature is given by the caller (lualine's `component:update_status()`) need not use self.
self = false
-- stylua lays out the code (110 columns, but it leaves a long string whole); comments and LuaCATS annotations
-- keep to 120.
max_code_line_length = false
max_comment_line_length = 120
include_files = { "lua/**/*.lua", "plugin/**/*.lua", "ftplugin/**/*.lua", "build.lua", "bench/**/*.lua" }
