"""A scriptable ACP agent built on the official Python SDK (`agent-client-protocol`), for tests.

Run: ``.venv/bin/python tests/agents/scripted_agent.py SCENARIO.json``. It speaks ACP on stdin/stdout
through the SDK, so the wire format it produces is the SDK's, not ours. Logs go to stderr.

Journal: if ``ACP_TEST_JOURNAL`` names a file, one JSON object per line is appended for
- every message from the client:
    {"kind": "request", "method": ..., "params": ...}
    {"kind": "notification", "method": ..., "params": ...}
- every answer to our own calls (params = the step's parameters after substitution):
    {"kind": "result", "call": "fs/read_text_file", "params": {...}, "result": {...}}
    {"kind": "error", "call": ..., "params": {...}, "code": -32002, "message": ..., "data": ...}
  (an answer the SDK cannot parse is journaled as kind "error" with code null and the validation message)
- the end of each turn: {"kind": "turn_end", "sessionId": ..., "stopReason": ...},
  or {"kind": "turn_error", "sessionId": ..., "code": ...}; before an exit step: {"kind": "exit", "code": 3}
- after a disk_edit step reported its end: {"kind": "disk_edit", "toolCallId": ..., "completedAt": <epoch s>};
  after a shell step's command exited: {"kind": "shell", "toolCallId": ..., "exitedAt": <epoch s>}
Each answer is also streamed to the client as an agent_message_chunk ``"<call> -> <json>"`` unless the
scenario says ``"echo": false``.

Scenario (every key optional):
{
  "protocolVersion": 1,                 # what initialize answers (e.g. 99 to test a mismatch)
  "agentInfo": {"name": "scripted", "title": "Scripted", "version": "1.0"},   # null/absent: not sent
  "meta": {"steering": {"supported": true}},   # initialize's _meta; with "steering" in it, the agent takes
                                        #   _session/steering (codex-acp's extension): "injected" while a
                                        #   turn runs (it wakes an until_steered step), else
                                        #   "promptRequired" when asked so (idleBehavior), else -32601
  "agentCapabilities": {"loadSession": true, "promptCapabilities": {"image": true},
                        "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {},
                                                "additionalDirectories": {}, "fork": {}},
                        "auth": {"logout": {}}},
  "authMethods": [{"id": "login", "name": "Log in"}],
  "authRequired": false,                # true: session/new|load|resume fail -32000 until authenticate
  "newSessionError": {"code": -32603, "message": "Internal error", "data": {"details": "why"},
                      "stderr": "the cause"},   # session/new fails so, after printing "stderr" there
  "login": {"tokenFile": "/tmp/x/token", "exitCode": 0},   # terminal login (see below)
  "newSessionHeld": {"from": 2, "untilFile": "/tmp/x/go",   # the from-th session/new and the ones after it
                     "error": {"code": -32603, "message": "no"},   # wait (polled) until the file exists,
                     "exit": 3},                # then answer; or fail with "error"; or journal {"kind":
                                                #   "exit"} and exit with "exit"
  "held": {"session/load": {"untilFile": "/tmp/x/go", ...},   # the same for session/load, session/resume
           "session/resume": {...}, "session/fork": {...}},   #   and session/fork ("from": the from-th call)
  "session": {"sessionId": "s-new",     # first session/new's id; default "sess-1", "sess-2", ...
              "modes": {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}]},
              "configOptions": [{"id": "model", "name": "Model", "type": "select", "currentValue": "a",
                                 "options": [{"value": "a", "name": "A"}, {"value": "b", "name": "B"}]}]},
  "sessions": [                         # stored sessions for list/load/resume/delete
    {"sessionId": "old-1", "cwd": "/p", "title": "Old", "updatedAt": "2025-01-01T00:00:00Z",
     "history": [{"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}}],
     "modes": ..., "configOptions": ...}],   # modes/configOptions default to "session"'s
  "listPageSize": 2,                    # session/list page size (cursor = offset as a string)
  "setMode": {"refuse": ["code"], "error": {"code": -32602, "message": "no"}, "notify": true},
  "setConfigOption": {"refuse": [{"configId": "model", "value": "b"}],
                      "error": {"code": -32602, "message": "no"},
                      "notify": true},          # also config_option_update before answering (codex-acp 2.6)
  "echo": true,
  "turns": [                            # the N-th session/prompt received (any session) runs turns[N]
    [{"text": "Hello ${PROMPT}"},
     {"thought": "thinking"},
     {"update": {"sessionUpdate": "plan", "entries": []}},     # sent verbatim as params.update
     {"permission": {"toolCall": {"toolCallId": "t1", "title": "Edit"},
                     "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]}},
     {"read": {"path": "${CWD}/README.md", "line": 1, "limit": 10}},
     {"write": {"path": "${CWD}/out.txt", "content": "x"}},
     {"terminal": {"command": "echo", "args": ["hi"], "env": [{"name": "A", "value": "1"}],
                   "cwd": "${CWD}", "outputByteLimit": 1000,
                   "toolCallId": "t2",  # optional: also announce a tool_call embedding the terminal
                   "then": ["wait", "output", "kill", "release"]}},   # also {"until_output": "text"}
     {"elicit": {"mode": "form", "message": "Name?",
                 "requestedSchema": {"type": "object", "properties": {}}}},
     {"elicit": {"mode": "url", "message": "Log in", "elicitationId": "e1", "url": "https://x.test",
                 "completeAfterMs": 300}},   # also send elicitation/complete 300 ms after asking
     {"complete": "e1"},                # send elicitation/complete for this id
     {"disk_edit": {"path": "${CWD}/a.py", "content": "new text\n",   # the agent writes the disk itself
                    "style": "codex",    # codex-acp: tool_call in_progress (kind edit, diff of the whole
                                         #   file, locations, rawInput.changes), write, update completed;
                                         # "claude": claude-agent-acp: tool_call pending (no input
                                         #   yet), an update naming the file (rawInput file_path and
                                         #   old_string/new_string, locations), update in_progress,
                                         #   write, update completed with the fragment's diff;
                                         # "late": write first, then one tool_call already completed
                                         # "opencode": tool_call pending (kind edit, locations,
                                         #   rawInput filePath), write, then fs/write_text_file of the
                                         #   same text (its answer journaled), update completed
                    "old": "x", "new": "y",   # instead of content: replace the first "x" by "y"
                    "toolCallId": "e1", "holdMs": 0,   # holdMs: wait between the write and "completed"
                    "waitMs": 0,         # wait between the call's start and the write
                    "permission": false,     # true: ask (allow_once "allow") before writing
                    "linkTo": "/elsewhere/f",        # instead of writing: the file becomes a link to this
                    "linkParentTo": "/elsewhere"}},  # or its folder becomes a link to this folder
     {"disk_burst": {"dir": "${CWD}/new", "count": 2000}},   # count tool calls in progress at once, each
                                         #   naming a new file dir/new-NNNNN.txt, the files written, then
                                         #   every call completed at once
     {"terminals": {"count": 200, "command": "sleep", "args": ["60"], "env": [...]}},   # count
                                         #   terminal/create at once; journaled {"kind": "terminals", "ids"}
     {"writes": {"dir": "${CWD}/w", "count": 300}},   # count fs/write_text_file of new files at once
     {"shell": {"command": "sed -i s/a/b/ f.txt", "toolCallId": "x1"}},   # run in the session's cwd, reported
                                         #   only as an execute tool call (rawInput.command, output as text);
                                         # "ask": "CMD": then a permission request whose rawInput states CMD
                                         #   (title "askTitle", default the command; "askFields" added to
                                         #   its toolCall; "askRawInput" in place of its rawInput),
                                         #   and CMD run only if allowed; "kind": the announced kind
                                         #   (default execute); "announce": false: none; "bare": true:
                                         #   no announcement, the request without rawInput (gemini-cli's
                                         #   shape); a field given as null is left out of the request
     {"call": "terminal/output", "params": {"sessionId": "ghost", "terminalId": "t"}},   # any request,
                                        #   sent verbatim (its answer journaled and echoed like the others)
     {"as": "child-1", "steps": [...],  # these steps run as session child-1 (a subagent, or a session the
      "background": false},             #   client never opened): their updates, requests and echoes name
                                        #   it; a session/cancel naming it ends them (like a turn's);
                                        #   "background": true runs them beside the turn's next steps (the
                                        #   turn waits for them before it ends)
     {"sleep": 50},                     # milliseconds
     {"sleep_until_cancel": true},      # wait for session/cancel, then stopReason "cancelled"
     {"until_steered": true},           # wait for a _session/steering prompt, then say "steered: TEXT"
     {"error": {"code": -32603, "message": "boom"}},   # answer session/prompt with this error
     {"exit": 3},                       # os._exit(3) mid-turn
     {"stop": "max_tokens"}]            # end the turn now with this stopReason (default end_turn)
  ]
}
Terminal login: an auth method {"id": "term", "name": "…", "type": "terminal", "args": ["--login"]} makes the
client run ``scripted_agent.py SCENARIO.json --login`` in a terminal; with ``--login`` the agent prints a line
(with $LOGIN_USER if set), writes ``login.tokenFile`` and exits with ``login.exitCode`` (default 0). Whenever
that file exists the agent counts as authenticated (a restarted agent too). ``authenticate`` with a terminal
method's id is refused -32602: a client must run terminal methods, not authenticate with them.
Permission options default to allow_once "allow" / reject_once "reject". Turns past the end of the list
reply with one text chunk and end_turn. In every step, strings have ``${CWD}`` replaced by the session's
cwd, ``${PROMPT}`` by the prompt's text blocks joined with spaces and ``${TERMINAL}`` by the id of the last
terminal the session created. A session/cancel that arrives during
any step ends the turn with "cancelled" after that step. Methods gated by a capability the scenario does
not advertise (session/load, list, resume, close, delete, logout; the unstable fork, set_title and archive,
the last two's capabilities passed on as the scenario gives them) answer -32601. A fork (of a live or stored
session) is a new live session "fork-N", its history not replayed.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any, cast

import acp
from acp import helpers
from acp.exceptions import RequestError
from acp.schema import (
    EnvVariable,
    ForkSessionResponse,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ResumeSessionResponse,
    SetSessionConfigOptionResponse,
    ToolCallUpdate,
)
from pydantic import BaseModel, TypeAdapter, ValidationError

log = logging.getLogger("scripted_agent")

Json = Any
Handler = Any


# sessionCapabilities of the unstable schema the SDK drops (scenarios advertise them as they like).
UNSTABLE_SESSION_CAPABILITIES = ("title", "archive", "subagents")


class StopTurn(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PromptError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class Journal:
    def __init__(self, path: str | None) -> None:
        self._file = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115

    def write(self, entry: dict[str, Any]) -> None:
        if self._file is None:
            return
        self._file.write(json.dumps(entry, separators=(",", ":")) + "\n")
        # Tests read the journal while we run, and "exit" steps skip normal shutdown.
        self._file.flush()


class LiveSession:
    def __init__(self, session_id: str, cwd: str, modes: Json, config_options: Json) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.modes = copy.deepcopy(modes)
        self.config_options = copy.deepcopy(config_options)
        self.cancelled = asyncio.Event()
        self.in_turn = False
        # The prompts steered into the running turn, not yet taken by an until_steered step.
        self.steered: asyncio.Queue[str] = asyncio.Queue()
        # Steps run as another session ("as"), in the background: awaited before the turn ends.
        self.background: list[asyncio.Task[None]] = []
        # The id of the last terminal this session created: ${TERMINAL} in the steps after it.
        self.last_terminal = ""


def substitute(value: Json, env: dict[str, str]) -> Json:
    if isinstance(value, str):
        for key, repl in env.items():
            value = value.replace("${" + key + "}", repl)
        return value
    if isinstance(value, list):
        return [substitute(v, env) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, env) for k, v in value.items()}
    return value


def dump(model: Any) -> Json:
    if isinstance(model, BaseModel):
        return model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return model


class ScriptedAgent:
    def __init__(self, scenario: dict[str, Any], journal: Journal) -> None:
        self.sc = scenario
        self.journal = journal
        self.conn: Any = None
        self.authenticated = False
        self.sessions: dict[str, LiveSession] = {}
        self.stored: list[dict[str, Any]] = copy.deepcopy(scenario.get("sessions", []))
        self.turn_index = 0
        self.session_counter = 0
        self.new_session_calls = 0
        # The calls of each method "held" names, for its "from".
        self.held_calls: dict[str, int] = {}
        caps = scenario.get("agentCapabilities") or {}
        self.session_caps: dict[str, Any] = caps.get("sessionCapabilities") or {}
        self.can_load = bool(caps.get("loadSession"))
        self.logout_cap = (caps.get("auth") or {}).get("logout") is not None

    # -- wiring ---------------------------------------------------------------------------------

    def on_connect(self, conn: Any) -> None:
        self.conn = conn
        # The SDK routes requests to typed methods and drops the raw params; wrap its dispatcher so the
        # journal sees exactly what the client sent, and so methods the SDK has no route for still work.
        inner = conn._conn._handler

        async def handler(method: str, params: Any, is_notification: bool) -> Any:
            if is_notification:
                self.journal.write({"kind": "notification", "method": method, "params": params})
            else:
                self.journal.write({"kind": "request", "method": method, "params": params})
            if method == "session/delete" and not is_notification:
                return self._delete(params)
            if method == "logout" and not is_notification:
                return self._logout()
            if method == "_session/steering" and not is_notification:
                return self._steer(params)
            if method == "session/set_title" and not is_notification:
                return self._set_title(params)
            if method == "session/archive" and not is_notification:
                return self._archive(params)
            return await inner(method, params, is_notification)

        conn._conn._handler = handler

    # -- lifecycle ------------------------------------------------------------------------------

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        raw: dict[str, Any] = {"protocolVersion": self.sc.get("protocolVersion", 1)}
        if "agentCapabilities" in self.sc:
            raw["agentCapabilities"] = self.sc["agentCapabilities"]
        if self.sc.get("authMethods") is not None:
            raw["authMethods"] = self.sc["authMethods"]
        if self.sc.get("agentInfo") is not None:
            raw["agentInfo"] = self.sc["agentInfo"]
        if self.sc.get("meta") is not None:
            raw["_meta"] = self.sc["meta"]
        response = InitializeResponse.model_validate(raw)
        # The unstable capabilities the SDK's models do not know, kept as the scenario gives them.
        unknown = {k: v for k, v in self.session_caps.items() if k in UNSTABLE_SESSION_CAPABILITIES}
        if not unknown:
            return response
        dumped = response.model_dump(mode="json", by_alias=True, exclude_none=True)
        dumped.setdefault("agentCapabilities", {}).setdefault("sessionCapabilities", {}).update(unknown)
        return dumped  # type: ignore[return-value]

    def _steer(self, params: dict[str, Any]) -> dict[str, Any]:
        if "steering" not in (self.sc.get("meta") or {}):
            raise RequestError.method_not_found("_session/steering")
        live = self._live(params.get("sessionId", ""))
        if live.in_turn:
            text = " ".join(b.get("text", "") for b in params.get("prompt") or [] if b.get("type") == "text")
            live.steered.put_nowait(text)
            return {"outcome": "injected"}
        idle = ((params.get("_meta") or {}).get("steering") or {}).get("idleBehavior")
        if idle == "promptRequired":
            return {"outcome": "promptRequired", "reason": "noRunningTurn"}
        return {"outcome": "failed"}

    async def authenticate(self, method_id: str, **kwargs: Any) -> dict[str, Any]:
        ids = [m.get("id") for m in self.sc.get("authMethods") or [] if m.get("type") != "terminal"]
        if method_id not in ids:
            raise RequestError.invalid_params({"methodId": method_id})
        self.authenticated = True
        return {}

    def _logout(self) -> dict[str, Any]:
        if not self.logout_cap:
            raise RequestError.method_not_found("logout")
        self.authenticated = False
        token = self._token_file()
        if token is not None and token.exists():
            token.unlink()
        return {}

    def _token_file(self) -> Path | None:
        token = (self.sc.get("login") or {}).get("tokenFile")
        return Path(token) if token else None

    def _check_auth(self) -> None:
        token = self._token_file()
        if token is not None and token.exists():
            self.authenticated = True
        if self.sc.get("authRequired") and not self.authenticated:
            raise RequestError.auth_required()

    def _require(self, cap: str, method: str) -> None:
        if self.session_caps.get(cap) is None:
            raise RequestError.method_not_found(method)

    # -- sessions -------------------------------------------------------------------------------

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        self._check_auth()
        self.new_session_calls += 1
        held = self.sc.get("newSessionHeld")
        if held is not None and self.new_session_calls >= held.get("from", 1):
            await self._hold(held)
        refusal = self.sc.get("newSessionError")
        if refusal is not None:
            if refusal.get("stderr"):
                print(refusal["stderr"], file=sys.stderr, flush=True)
            raise RequestError(
                refusal.get("code", -32603), refusal.get("message", "Internal error"), refusal.get("data")
            )
        conf = self.sc.get("session") or {}
        self.session_counter += 1
        sid = conf.get("sessionId") if self.session_counter == 1 else None
        sid = sid or f"sess-{self.session_counter}"
        live = LiveSession(sid, cwd, conf.get("modes"), conf.get("configOptions"))
        self.sessions[sid] = live
        self.stored.append({"sessionId": sid, "cwd": cwd})
        return NewSessionResponse.model_validate(self._state({"sessionId": sid}, live))

    async def _held(self, method: str) -> None:
        """The call of `method` waits as the scenario's "held" says, when it names it."""
        held = (self.sc.get("held") or {}).get(method)
        self.held_calls[method] = self.held_calls.get(method, 0) + 1
        if held is not None and self.held_calls[method] >= held.get("from", 1):
            await self._hold(held)

    async def _hold(self, held: dict[str, Any]) -> None:
        """A session/new (load, resume, fork) answered once the test says (by creating the file), as the
        scenario says."""
        release = Path(held["untilFile"])
        while not release.exists():
            await asyncio.sleep(0.01)
        if "exit" in held:
            self.journal.write({"kind": "exit", "code": held["exit"]})
            sys.stderr.flush()
            os._exit(int(held["exit"]))
        if "error" in held:
            e = held["error"]
            raise RequestError(e.get("code", -32603), e.get("message", "scripted error"), e.get("data"))

    def _state(self, raw: dict[str, Any], live: LiveSession) -> dict[str, Any]:
        if live.modes is not None:
            raw["modes"] = live.modes
        if live.config_options is not None:
            raw["configOptions"] = live.config_options
        return raw

    def _stored(self, session_id: str) -> dict[str, Any]:
        for entry in self.stored:
            if entry.get("sessionId") == session_id:
                return entry
        raise RequestError.resource_not_found(session_id)

    def _revive(self, session_id: str, cwd: str) -> LiveSession:
        entry = self._stored(session_id)
        conf = self.sc.get("session") or {}
        live = LiveSession(
            session_id,
            cwd,
            entry.get("modes", conf.get("modes")),
            entry.get("configOptions", conf.get("configOptions")),
        )
        self.sessions[session_id] = live
        return live

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        if not self.can_load:
            raise RequestError.method_not_found("session/load")
        self._check_auth()
        await self._held("session/load")
        live = self._revive(session_id, cwd)
        for update in self._stored(session_id).get("history", []):
            await self.send_raw_update(session_id, substitute(update, {"CWD": cwd}))
        return LoadSessionResponse.model_validate(self._state({}, live))

    async def resume_session(self, session_id: str, cwd: str, **kwargs: Any) -> ResumeSessionResponse:
        self._require("resume", "session/resume")
        self._check_auth()
        await self._held("session/resume")
        live = self._revive(session_id, cwd)
        return ResumeSessionResponse.model_validate(self._state({}, live))

    async def fork_session(self, session_id: str, cwd: str, **kwargs: Any) -> ForkSessionResponse:
        self._require("fork", "session/fork")
        self._check_auth()
        if session_id not in self.sessions:
            self._stored(session_id)
        await self._held("session/fork")
        self.session_counter += 1
        sid = f"fork-{self.session_counter}"
        conf = self.sc.get("session") or {}
        live = LiveSession(sid, cwd, conf.get("modes"), conf.get("configOptions"))
        self.sessions[sid] = live
        self.stored.append({"sessionId": sid, "cwd": cwd})
        return ForkSessionResponse.model_validate(self._state({"sessionId": sid}, live))

    async def close_session(self, session_id: str, **kwargs: Any) -> dict[str, Any]:
        self._require("close", "session/close")
        live = self.sessions.pop(session_id, None)
        if live is None:
            raise RequestError.resource_not_found(session_id)
        live.cancelled.set()
        return {}

    def _set_title(self, params: Any) -> dict[str, Any]:
        # The unstable session/set_title: the title stored with its runs of spaces collapsed (an agent may
        # normalize it: the client shows what comes back).
        self._require("title", "session/set_title")
        sid = params.get("sessionId") if isinstance(params, dict) else None
        title = " ".join(str(params.get("title", "")).split()) if isinstance(params, dict) else ""
        if not title:
            raise RequestError.invalid_params({"title": title})
        entry = next((e for e in self.stored if e.get("sessionId") == sid), None)
        if entry is None:
            raise RequestError.resource_not_found(sid)
        entry["title"] = title
        return {"title": title}

    def _archive(self, params: Any) -> dict[str, Any]:
        # The unstable session/archive: hidden from session/list from now on, a live session closed.
        self._require("archive", "session/archive")
        sid = params.get("sessionId") if isinstance(params, dict) else None
        if not any(e.get("sessionId") == sid for e in self.stored) and sid not in self.sessions:
            raise RequestError.resource_not_found(sid)
        self.stored = [e for e in self.stored if e.get("sessionId") != sid]
        live = self.sessions.pop(sid, None) if isinstance(sid, str) else None
        if live is not None:
            live.cancelled.set()
        return {}

    def _delete(self, params: Any) -> dict[str, Any]:
        self._require("delete", "session/delete")
        sid = params.get("sessionId") if isinstance(params, dict) else None
        if not isinstance(sid, str):
            raise RequestError.invalid_params({"sessionId": sid})
        self.stored = [e for e in self.stored if e.get("sessionId") != sid]
        self.sessions.pop(sid, None)
        return {}

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        self._require("list", "session/list")
        matching = [e for e in self.stored if cwd is None or e.get("cwd") == cwd]
        try:
            start = int(cursor) if cursor else 0
        except ValueError:
            raise RequestError.invalid_params({"cursor": cursor}) from None
        size = int(self.sc.get("listPageSize") or len(matching) or 1)
        page = matching[start : start + size]
        infos = [{k: v for k, v in e.items() if k not in ("history", "modes", "configOptions")} for e in page]
        raw: dict[str, Any] = {"sessions": infos}
        if start + size < len(matching):
            raw["nextCursor"] = str(start + size)
        return ListSessionsResponse.model_validate(raw)

    def _live(self, session_id: str) -> LiveSession:
        live = self.sessions.get(session_id)
        if live is None:
            raise RequestError.resource_not_found(session_id)
        return live

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> dict[str, Any]:
        live = self._live(session_id)
        conf = self.sc.get("setMode") or {}
        if mode_id in conf.get("refuse", []):
            err = conf.get("error") or {"code": -32602, "message": f"mode {mode_id} refused"}
            raise RequestError(err["code"], err["message"], err.get("data"))
        available = [m.get("id") for m in (live.modes or {}).get("availableModes", [])]
        if mode_id not in available:
            raise RequestError.invalid_params({"modeId": mode_id})
        live.modes["currentModeId"] = mode_id
        if conf.get("notify"):
            await self.send_raw_update(
                session_id, {"sessionUpdate": "current_mode_update", "currentModeId": mode_id}
            )
        return {}

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        live = self._live(session_id)
        conf = self.sc.get("setConfigOption") or {}
        for refused in conf.get("refuse", []):
            if refused.get("configId") == config_id and refused.get("value") == value:
                err = conf.get("error") or {"code": -32602, "message": f"{config_id}={value} refused"}
                raise RequestError(err["code"], err["message"], err.get("data"))
        for option in live.config_options or []:
            if option.get("id") == config_id:
                option["currentValue"] = value
                break
        else:
            raise RequestError.invalid_params({"configId": config_id})
        if conf.get("notify"):
            await self.send_raw_update(
                session_id, {"sessionUpdate": "config_option_update", "configOptions": live.config_options}
            )
        return SetSessionConfigOptionResponse.model_validate({"configOptions": live.config_options})

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self.sessions.get(session_id)
        if live is not None:
            live.cancelled.set()

    # -- prompt turns ---------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        live = self._live(session_id)
        live.cancelled.clear()
        turns: list[list[dict[str, Any]]] = self.sc.get("turns", [])
        index = self.turn_index
        self.turn_index += 1
        text = " ".join(
            getattr(block, "text", "") for block in prompt if getattr(block, "type", "") == "text"
        )
        steps = turns[index] if index < len(turns) else [{"text": f"(no scripted turn {index + 1})"}]
        env = {"CWD": live.cwd, "PROMPT": text}
        stop = "end_turn"
        live.in_turn = True
        try:
            for step in steps:
                env["TERMINAL"] = live.last_terminal
                await self.run_step(live, substitute(step, env))
                if live.cancelled.is_set():
                    raise StopTurn("cancelled")
            await self.settle_background(live)
        except StopTurn as done:
            stop = done.reason
        except PromptError as err:
            self.journal.write({"kind": "turn_error", "sessionId": session_id, "code": err.code})
            raise RequestError(err.code, err.message, err.data) from None
        finally:
            live.in_turn = False
            await self.settle_background(live)
        self.journal.write({"kind": "turn_end", "sessionId": session_id, "stopReason": stop})
        return PromptResponse.model_validate({"stopReason": stop})

    async def settle_background(self, live: LiveSession) -> None:
        tasks, live.background = live.background, []
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def run_as(self, live: LiveSession, step: dict[str, Any]) -> None:
        """Steps run as another session: a subagent the scenario announced, or one the client never opened."""
        sid = str(step["as"])
        other = self.sessions.get(sid)
        if other is None:
            other = LiveSession(sid, live.cwd, None, None)
            self.sessions[sid] = other
        other.cancelled.clear()

        async def run() -> None:
            other.in_turn = True
            stop = "end_turn"
            try:
                for inner in step.get("steps") or []:
                    await self.run_step(other, inner)
                    if other.cancelled.is_set() or live.cancelled.is_set():
                        raise StopTurn("cancelled")
            except StopTurn as done:
                stop = done.reason
            finally:
                other.in_turn = False
            self.journal.write({"kind": "as_end", "sessionId": sid, "stopReason": stop})

        if step.get("background"):
            live.background.append(asyncio.create_task(run()))
        else:
            await run()

    async def run_call(self, live: LiveSession, step: dict[str, Any]) -> None:
        method = str(step["call"])
        params = step.get("params") or {}
        try:
            result = await self.conn._conn.send_request(method, params)
        except RequestError as err:
            entry = {"kind": "error", "call": method, "params": params, "code": err.code}
            entry |= {"message": str(err), "data": err.data}
            self.journal.write(entry)
            await self.echo(live, f"{method} -> error {err.code}: {err}")
            return
        self.journal.write({"kind": "result", "call": method, "params": params, "result": result})
        await self.echo(live, f"{method} -> {json.dumps(result)}")

    async def send_raw_update(self, session_id: str, update: Json) -> None:
        # Verbatim, so scenarios can send updates the SDK's models do not know (or malformed ones).
        await self.conn._conn.send_notification("session/update", {"sessionId": session_id, "update": update})

    async def say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(session_id, helpers.update_agent_message_text(text))

    async def call(self, live: LiveSession, name: str, params: dict[str, Any], coro: Any) -> Any:
        """Await one call to the client, journal and echo its answer; None if it failed."""
        try:
            result = await coro
        except RequestError as err:
            entry = {"kind": "error", "call": name, "params": params, "code": err.code}
            entry |= {"message": str(err), "data": err.data}
            self.journal.write(entry)
            await self.echo(live, f"{name} -> error {err.code}: {err}")
            return None
        except ValidationError as err:
            entry = {"kind": "error", "call": name, "params": params, "code": None, "message": str(err)}
            self.journal.write(entry)
            await self.echo(live, f"{name} -> invalid answer: {err.error_count()} errors")
            return None
        raw = dump(result)
        self.journal.write({"kind": "result", "call": name, "params": params, "result": raw})
        await self.echo(live, f"{name} -> {json.dumps(raw)}")
        return result if result is not None else {}

    async def echo(self, live: LiveSession, text: str) -> None:
        if self.sc.get("echo", True):
            if len(text) > 300:
                text = text[:300] + "…"
            await self.say(live.session_id, text + "\n")

    async def run_step(self, live: LiveSession, step: dict[str, Any]) -> None:
        sid = live.session_id
        conn = self.conn
        if "update" in step:
            await self.send_raw_update(sid, step["update"])
        elif "text" in step:
            await self.say(sid, step["text"])
        elif "thought" in step:
            await conn.session_update(sid, helpers.update_agent_thought_text(step["thought"]))
        elif "permission" in step:
            p = step["permission"]
            options = p.get("options") or [
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ]
            tool_call = ToolCallUpdate.model_validate(p.get("toolCall") or {"toolCallId": "perm"})
            opts = [PermissionOption.model_validate(o) for o in options]
            await self.call(
                live,
                "session/request_permission",
                p,
                conn.request_permission(session_id=sid, tool_call=tool_call, options=opts),
            )
        elif "read" in step:
            r = step["read"]
            await self.call(
                live,
                "fs/read_text_file",
                r,
                conn.read_text_file(session_id=sid, path=r["path"], line=r.get("line"), limit=r.get("limit")),
            )
        elif "write" in step:
            w = step["write"]
            await self.call(
                live,
                "fs/write_text_file",
                w,
                conn.write_text_file(session_id=sid, path=w["path"], content=w["content"]),
            )
        elif "terminal" in step:
            await self.run_terminal(live, step["terminal"])
        elif "disk_edit" in step:
            await self.run_disk_edit(live, step["disk_edit"])
        elif "shell" in step:
            await self.run_shell(live, step["shell"])
        elif "disk_burst" in step:
            await self.run_disk_burst(live, step["disk_burst"])
        elif "terminals" in step:
            await self.run_terminals(live, step["terminals"])
        elif "writes" in step:
            await self.run_writes(live, step["writes"])
        elif "elicit" in step:
            await self.run_elicit(live, step["elicit"])
        elif "complete" in step:
            await conn.complete_elicitation(step["complete"])
        elif "as" in step:
            await self.run_as(live, step)
        elif "call" in step:
            await self.run_call(live, step)
        elif "sleep" in step:
            await asyncio.sleep(float(step["sleep"]) / 1000)
        elif "sleep_until_cancel" in step:
            await live.cancelled.wait()
            raise StopTurn("cancelled")
        elif "until_steered" in step:
            await self.say(sid, f"steered: {await live.steered.get()}")
        elif "stop" in step:
            raise StopTurn(step["stop"])
        elif "error" in step:
            e = step["error"]
            raise PromptError(e.get("code", -32603), e.get("message", "scripted error"), e.get("data"))
        elif "exit" in step:
            self.journal.write({"kind": "exit", "code": step["exit"]})
            sys.stderr.flush()
            os._exit(int(step["exit"]))
        else:
            log.warning("unknown step %r", step)

    async def run_terminal(self, live: LiveSession, t: dict[str, Any]) -> None:
        sid = live.session_id
        conn = self.conn
        env = [EnvVariable.model_validate(e) for e in t["env"]] if t.get("env") is not None else None
        created = await self.call(
            live,
            "terminal/create",
            t,
            conn.create_terminal(
                session_id=sid,
                command=t["command"],
                args=t.get("args"),
                env=env,
                cwd=t.get("cwd"),
                output_byte_limit=t.get("outputByteLimit"),
            ),
        )
        if created is None:
            return
        tid: str = created.terminal_id
        live.last_terminal = tid
        if t.get("toolCallId"):
            await conn.session_update(
                sid,
                helpers.start_tool_call(
                    t["toolCallId"],
                    t.get("title") or f"{t['command']} {' '.join(t.get('args') or [])}".strip(),
                    kind="execute",
                    status="in_progress",
                    content=[helpers.tool_terminal_ref(tid)],
                ),
            )
        ref = {"terminalId": tid}
        for action in t.get("then", []):
            if isinstance(action, dict) and "until_output" in action:
                # Poll terminal/output until the text shows (10 s at most); only the last answer is journaled.
                want = str(action["until_output"])
                for _ in range(500):
                    out = await conn.terminal_output(session_id=sid, terminal_id=tid)
                    if want in out.output or out.exit_status is not None:
                        break
                    await asyncio.sleep(0.02)
                coro = conn.terminal_output(session_id=sid, terminal_id=tid)
                await self.call(live, "terminal/output", ref, coro)
            elif action == "output":
                coro = conn.terminal_output(session_id=sid, terminal_id=tid)
                await self.call(live, "terminal/output", ref, coro)
            elif action == "wait":
                coro = conn.wait_for_terminal_exit(session_id=sid, terminal_id=tid)
                await self.call(live, "terminal/wait_for_exit", ref, coro)
            elif action == "kill":
                coro = conn.kill_terminal(session_id=sid, terminal_id=tid)
                await self.call(live, "terminal/kill", ref, coro)
            elif action == "release":
                coro = conn.release_terminal(session_id=sid, terminal_id=tid)
                await self.call(live, "terminal/release", ref, coro)
            else:
                log.warning("unknown terminal action %r", action)
        if t.get("toolCallId"):
            await conn.session_update(sid, helpers.update_tool_call(t["toolCallId"], status="completed"))

    async def run_disk_edit(self, live: LiveSession, e: dict[str, Any]) -> None:
        """An edit the agent writes to disk itself, reported the way codex-acp or claude-agent-acp do."""
        sid = live.session_id
        path = Path(e["path"])
        call_id = e.get("toolCallId") or "edit-1"
        style = e.get("style", "codex")
        old_file = path.read_text(encoding="utf-8") if path.exists() else None
        if "content" in e:
            new_file = str(e["content"])
            fragment_old, fragment_new = old_file or "", new_file
            raw_input: dict[str, Any] = {"file_path": str(path), "content": new_file}
        else:
            fragment_old, fragment_new = str(e["old"]), str(e["new"])
            new_file = (old_file or "").replace(fragment_old, fragment_new, 1)
            raw_input = {"file_path": str(path), "old_string": fragment_old, "new_string": fragment_new}
        title = e.get("title") or f"Edit {path.name}"
        location = [{"path": str(path)}]
        whole_diff = {"type": "diff", "path": str(path), "oldText": old_file, "newText": new_file}
        if old_file is None:
            del whole_diff["oldText"]
        fragment_diff = {"type": "diff", "path": str(path), "oldText": fragment_old, "newText": fragment_new}
        if old_file is None:
            del fragment_diff["oldText"]

        async def update(fields: dict[str, Any]) -> None:
            await self.send_raw_update(
                sid, {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}
            )

        async def write() -> bool:
            if e.get("permission"):
                # As claude-agent-acp: the edit waits for the user's answer (the client saw the call then).
                options = [
                    PermissionOption.model_validate(
                        {"optionId": "allow", "name": "Allow", "kind": "allow_once"}
                    )
                ]
                tool_call = ToolCallUpdate.model_validate({"toolCallId": call_id})
                answer = await self.call(
                    live,
                    "session/request_permission",
                    {"toolCallId": call_id},
                    self.conn.request_permission(session_id=sid, tool_call=tool_call, options=options),
                )
                if answer is None or getattr(answer.outcome, "option_id", None) != "allow":
                    await update({"status": "failed"})
                    return False
            if e.get("waitMs"):
                # The client has seen the call start (and snapshotted its file) before the write.
                await asyncio.sleep(float(e["waitMs"]) / 1000)
            if e.get("linkTo"):
                # A hostile agent: the file named becomes a link to another one during the call.
                path.unlink(missing_ok=True)
                path.symlink_to(e["linkTo"])
            elif e.get("linkParentTo"):
                # Or its folder becomes a link to another folder (holding a file of the same name).
                path.parent.rename(path.parent.with_name(path.parent.name + ".moved"))
                path.parent.symlink_to(e["linkParentTo"], target_is_directory=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(new_file, encoding="utf-8")
            if e.get("holdMs"):
                await asyncio.sleep(float(e["holdMs"]) / 1000)
            return True

        start = {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": title, "kind": "edit"}
        if style == "late":
            if not await write():
                return
            done = {**start, "status": "completed", "locations": location, "content": [fragment_diff]}
            await self.send_raw_update(sid, done | {"rawInput": raw_input})
        elif style == "opencode":
            # opencode writes the disk itself and also sends fs/write_text_file of the same text.
            raw = {"filePath": str(path), "oldString": fragment_old, "newString": fragment_new}
            await self.send_raw_update(
                sid, {**start, "status": "pending", "locations": location, "rawInput": raw}
            )
            if not await write():
                return
            await self.call(
                live,
                "fs/write_text_file",
                {"path": str(path), "content": new_file},
                self.conn.write_text_file(session_id=sid, path=str(path), content=new_file),
            )
            await update({"status": "completed", "content": [fragment_diff]})
        elif style == "claude":
            # It starts while the model still streams its input; an update without a status names the file.
            await self.send_raw_update(sid, {**start, "status": "pending", "rawInput": {}})
            await update({"locations": location, "rawInput": raw_input})
            await update({"status": "in_progress"})
            if not await write():
                return
            await update({"status": "completed", "content": [fragment_diff]})
        else:
            changes = {str(path): {"type": "update" if old_file is not None else "add"}}
            await self.send_raw_update(
                sid,
                {
                    **start,
                    "status": "in_progress",
                    "locations": location,
                    "content": [whole_diff],
                    "rawInput": {"changes": changes},
                },
            )
            if not await write():
                return
            await update({"status": "completed"})
        # Wall-clock time, which Neovim's vim.uv.gettimeofday() shares: how soon the buffer followed.
        self.journal.write({"kind": "disk_edit", "toolCallId": call_id, "completedAt": time.time()})

    async def run_disk_burst(self, live: LiveSession, e: dict[str, Any]) -> None:
        """Many tool calls creating files at once, as an agent that writes a whole project does."""
        sid = live.session_id
        folder = Path(e["dir"])
        folder.mkdir(parents=True, exist_ok=True)
        paths = [folder / f"new-{i:05d}.txt" for i in range(int(e["count"]))]
        for i, path in enumerate(paths):
            start = {"sessionUpdate": "tool_call", "toolCallId": f"burst-{i}", "title": f"Write {path.name}"}
            location = [{"path": str(path)}]
            start |= {"kind": "edit", "status": "in_progress", "locations": location}
            await self.send_raw_update(sid, start | {"rawInput": {"file_path": str(path)}})
        # The client snapshots each file ("absent") when it sees its call start.
        await asyncio.sleep(0.5)
        for i, path in enumerate(paths):
            path.write_text(f"file {i}\n", encoding="utf-8")
        for i in range(len(paths)):
            done = {"sessionUpdate": "tool_call_update", "toolCallId": f"burst-{i}", "status": "completed"}
            await self.send_raw_update(sid, done)

    async def run_terminals(self, live: LiveSession, t: dict[str, Any]) -> None:
        """Many `terminal/create` at once, as an agent running commands in parallel sends them."""
        env = [EnvVariable.model_validate(v) for v in t["env"]] if t.get("env") is not None else None
        created = await asyncio.gather(
            *(
                self.conn.create_terminal(
                    session_id=live.session_id, command=t["command"], args=t.get("args"), env=env
                )
                for _ in range(int(t["count"]))
            )
        )
        self.journal.write({"kind": "terminals", "ids": [c.terminal_id for c in created]})

    async def run_writes(self, live: LiveSession, w: dict[str, Any]) -> None:
        """Many `fs/write_text_file` at once, as an agent writing a project's files in parallel sends them."""
        folder = Path(w["dir"])
        folder.mkdir(parents=True, exist_ok=True)
        await asyncio.gather(
            *(
                self.conn.write_text_file(
                    session_id=live.session_id, path=str(folder / f"w-{i:05d}.txt"), content=f"written {i}\n"
                )
                for i in range(int(w["count"]))
            )
        )
        self.journal.write({"kind": "writes", "count": int(w["count"])})

    async def run_shell(self, live: LiveSession, e: dict[str, Any]) -> None:
        """A command the agent runs in its own shell: only an execute tool call says so, naming no file."""
        sid = live.session_id
        call_id = e.get("toolCallId") or "shell-1"
        command = str(e["command"])
        if e.get("announce", not e.get("bare")):
            await self.send_raw_update(
                sid,
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": call_id,
                    "title": command,
                    "kind": e.get("kind", "execute"),
                    "status": "in_progress",
                    "rawInput": {"command": command},
                },
            )
        if "ask" in e:
            # Asks first, as a hostile agent may: the request states another command (its title unchanged),
            # and that is the one run when allowed.
            command = str(e["ask"])
            tool_call: dict[str, Any] = {
                "toolCallId": call_id,
                "title": e.get("askTitle", e["command"]),
                "rawInput": e.get("askRawInput", {"command": command}),
            }
            if e.get("bare"):
                # gemini-cli 0.61's run_shell_command: no announcement, a request with a title and a kind
                # and no rawInput.
                tool_call = {"toolCallId": call_id, "title": e.get("askTitle", command), "kind": "execute"}
            tool_call = {key: value for key, value in tool_call.items() if value is not None}
            tool_call.update(e.get("askFields", {}))
            options = [
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ]
            answer = await self.call(
                live,
                "session/request_permission",
                {"toolCall": tool_call, "options": options},
                self.conn.request_permission(
                    session_id=sid,
                    tool_call=ToolCallUpdate.model_validate(tool_call),
                    options=[PermissionOption.model_validate(o) for o in options],
                ),
            )
            outcome = getattr(answer, "outcome", None)
            if getattr(outcome, "option_id", None) != "allow":
                await self.send_raw_update(
                    sid, {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "failed"}
                )
                return
        proc = await asyncio.create_subprocess_shell(
            command, cwd=live.cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        out, _ = await proc.communicate()
        self.journal.write({"kind": "shell", "toolCallId": call_id, "exitedAt": time.time()})
        text = {"type": "content", "content": {"type": "text", "text": out.decode("utf-8", "replace")}}
        status = "completed" if proc.returncode == 0 else "failed"
        await self.send_raw_update(
            sid,
            {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status, "content": [text]},
        )

    async def run_elicit(self, live: LiveSession, e: dict[str, Any]) -> None:
        fields = {k: v for k, v in e.items() if k not in ("message", "completeAfterMs")}
        if "requestId" not in fields:
            fields.setdefault("sessionId", live.session_id)
        mode = TypeAdapter(acp.schema.ElicitationMode).validate_python(fields)
        later = None
        if e.get("completeAfterMs") is not None:

            async def complete_later() -> None:
                await asyncio.sleep(float(e["completeAfterMs"]) / 1000)
                await self.conn.complete_elicitation(fields["elicitationId"])

            later = asyncio.create_task(complete_later())
        await self.call(live, "elicitation/create", e, self.conn.create_elicitation(e["message"], mode))
        if later is not None:
            await later


def login(scenario: dict[str, Any]) -> int:
    """The terminal login: what a real agent's interactive `login` subcommand would do, minus the asking."""
    conf = scenario.get("login") or {}
    print(f"Logging in as {os.environ.get('LOGIN_USER', 'someone')}...", flush=True)
    code = int(conf.get("exitCode", 0))
    if code == 0 and conf.get("tokenFile"):
        Path(conf["tokenFile"]).write_text("token", encoding="utf-8")
    return code


def main(argv: list[str]) -> int:
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="scripted_agent %(levelname)s %(message)s"
    )
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--login"):
        print("usage: scripted_agent.py SCENARIO.json [--login]", file=sys.stderr)
        return 2
    scenario = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    if len(argv) == 3:
        return login(scenario)
    agent = ScriptedAgent(scenario, Journal(os.environ.get("ACP_TEST_JOURNAL")))
    # resume/close are "unstable" in SDK 0.12 though stable in the v1 schema; opt in so they are routed.
    # The SDK routes by attribute name, so a partial implementation is fine (missing methods answer -32601).
    asyncio.run(acp.run_agent(cast(acp.Agent, agent), use_unstable_protocol=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
