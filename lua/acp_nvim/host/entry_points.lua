--- Every Lua function the Python host calls, by module: `acp_nvim/nvim/lua_api.py` writes the calls, and
--- `tests/unit/test_boundary.py` fails when the two lists differ. Nothing requires this table at run time: it is
--- the Lua reader's view of the boundary (a function listed here is one the host relies on; renaming it is a
--- change of both sides). The shapes that cross are declared beside the Structs they come from (`lua_values.py`,
--- `app/views.py`, `app/chat/ops.py`, `app/editor/port.py`).
return {
  ["acp_nvim"] = { "start" },
  ["acp_nvim.config"] = { "configured" },
  ["acp_nvim.editor.agent_groups"] = { "add", "leaving_noted", "remove" },
  ["acp_nvim.editor.checkpoint"] = { "run" },
  ["acp_nvim.editor.follow"] = { "show" },
  ["acp_nvim.editor.fs"] = { "file_written", "find_buffer", "read", "write" },
  ["acp_nvim.editor.fs.disk_watch"] = { "unwatch", "watch" },
  ["acp_nvim.editor.fs.follow_disk"] = { "apply" },
  ["acp_nvim.editor.fs.view"] = { "forget" },
  ["acp_nvim.editor.mcp"] = { "buffers", "cancel", "diagnostics", "lsp", "selection" },
  ["acp_nvim.editor.review.notes"] = { "drop", "quickfix", "show" },
  ["acp_nvim.editor.terminal"] = { "create", "kill", "kill_many", "output", "release", "wait_for_exit" },
  ["acp_nvim.host"] = { "bootstrapped" },
  ["acp_nvim.host.batch"] = { "run" },
  ["acp_nvim.ui.agents"] = { "catalog" },
  ["acp_nvim.ui.ask"] = { "answer", "select", "input", "terminal" },
  ["acp_nvim.ui.attention"] = { "fire" },
  ["acp_nvim.ui.chat"] = { "apply_json", "create", "destroy", "open", "reset" },
  ["acp_nvim.ui.chat_queue"] = { "show" },
  ["acp_nvim.ui.elicitation"] = { "ask", "close" },
  ["acp_nvim.ui.permission"] = { "ask" },
  ["acp_nvim.ui.prompt"] = { "draft", "refused" },
  ["acp_nvim.ui.sandbox"] = { "ask" },
  ["acp_nvim.ui.status"] = { "set" },
}
