"""The door of the host: every method of the table decodes the arguments Lua really sends it (as
`lua/acp_nvim/host/api.lua`'s callers write them), and refuses a malformed call in one line."""

from __future__ import annotations

import logging

import msgspec
import pytest

from acp_nvim.nvim import host_methods as hm
from acp_nvim.nvim.host import Host

BY_NAME = {method.name: method for method in hm.METHODS}
START = {"name": None, "cwd": "/project"}
BOOT = {
    "log": "/tmp/acp.log",
    "log_level": "info",
    "setup": {"options": {"default_agent": "ts"}, "generation": 1},
    "data": "/data",
    "cache": "/cache",
    "state": "/state",
}
SELECTION = {"path": "/project/a.lua", "start": 1, "end": 3, "text": "x = 1", "filetype": "lua"}

# Each method's argument lists as Lua sends them (vim.NIL arrives as None; an empty Lua table as []).
REAL_SHAPES: dict[str, list[list[object]]] = {
    "acp_bootstrap": [[BOOT], [{**BOOT, "log": None}]],
    "AcpNvimBootstrap": [[BOOT]],
    "acp_setup": [
        [{"options": {"chat": {"width": 80}}, "generation": 2}],
        [{"options": [], "generation": 3}],
    ],
    "acp_start": [[START], [{"name": "ts", "cwd": "/project"}]],
    "acp_restart": [[START]],
    "acp_stop": [[None], ["session-1"]],
    "acp_prompt": [["hello", [], None], ["hello", [SELECTION], "session-1"]],
    "acp_cancel": [[None], [None, None], ["session-1", "subagent"]],
    "acp_steer": [["left", [], None], ["left", [SELECTION], "session-1"]],
    "acp_queue": [
        ["s1", "list", None, None, None],
        ["s1", "drop", 3, None, None],
        ["s1", "edit", 2, "new text", [{"kind": "file", "path": "/p/a", "name": "a", "mention": True}]],
    ],
    "acp_sessions": [
        [START, "open", False, None],
        [START, "delete", True, "session-1"],
        [START, "rename", False, None],
    ],
    "acp_mode": [[None, None], ["session-1", "code"]],
    "acp_config": [[None, None, None], ["session-1", "model", "large"]],
    "acp_auth": [[None, None], [None, "login"]],
    "acp_logout": [[None]],
    "acp_fork": [[None], ["session-1"]],
    "acp_add_dir": [[None, "/elsewhere"]],
    "acp_focus": [["session-1"]],
    "acp_close": [["session-1"]],
    "acp_permissions": [[None, []], ["session-1", ["revoke", "2"]]],
    "acp_checkpoint": [[None, ["restore", "1"]], ["session-1", ["offer", 7]]],
    "acp_review": [
        [{"action": "send", "spans": [{"id": 1, "start": 3, "end": 5}]}],
        [{"action": "edit", "note_id": 2, "text": "shorter"}],
        [
            {
                "action": "add",
                "note": {
                    "kind": "rejection",
                    "session_id": "session-1",
                    "bufnr": 3,
                    "path": "/p/a.py",
                    "start": 2,
                    "end": 2,
                    "text": "",
                    "old": ["x"],
                    "new": ["y"],
                    "hunk": True,
                    "filetype": "python",
                },
            }
        ],
    ],
    "acp_disk_changed": [["session-1", ["/project/a.lua"]]],
    "acp_leaving": [[]],
    "acp_reply": [[3, "allow"], [3, None], [3, 0], [3, {"name": "x"}], [3]],
    "acp_elicitation_check": [
        [{"kind": "string", "title": "Name", "required": True, "min_length": None}, "Ada"],
        [{"kind": "multi", "title": "Tags", "min_items": 1, "max_items": None}, ["a", "b"]],
        [{"kind": "multi", "title": "Tags"}, []],
    ],
    "acp_registry_load": [[]],
    "acp_registry_agents": [["", ""], ["update", "some-agent"]],
    "acp_registry_health": [[]],
    "acp_config_report": [[], ["/usr/bin:/bin"]],
    "acp_log_view": [[""]],
    "acp_log_save": [["", "/tmp/log.ndjson"]],
    "acp_log_names": [[]],
}


def test_every_method_of_the_table_has_its_real_shapes_here() -> None:
    assert sorted(BY_NAME) == sorted(REAL_SHAPES)
    assert len(BY_NAME) == len(hm.METHODS), "a method is in the table twice"


@pytest.mark.parametrize(
    ("name", "args"), [(name, args) for name, shapes in REAL_SHAPES.items() for args in shapes]
)
def test_each_method_decodes_what_lua_sends(name: str, args: list[object]) -> None:
    BY_NAME[name].bind(args)


def test_what_is_decoded_is_typed() -> None:
    start = msgspec.convert([START, "open", True, None], hm.Sessions)
    assert start.request == hm.StartRequest(name=None, cwd="/project")
    assert (start.action, start.everywhere, start.session_id) == ("open", True, None)
    boot = msgspec.convert([BOOT], hm.Bootstrap).options
    assert boot is not None and boot.setup == hm.SetupTable(options={"default_agent": "ts"}, generation=1)
    # The chat's checkpoint key sends an item's id, a number: the command reads words.
    assert msgspec.convert(["s", ["offer", 7]], hm.Words).words() == ["offer", "7"]


@pytest.mark.parametrize(
    ("name", "args", "says"),
    [
        ("acp_start", [{"name": 5, "cwd": "/p"}], "$[0].name"),
        ("acp_start", [], "at least length 1"),
        ("acp_stop", [None, None], "at most length 1"),
        ("acp_prompt", [None, [], None], "$[0]"),
        ("acp_sessions", [START, "open", "all", None], "$[2]"),
        ("acp_disk_changed", ["s", "/one/path"], "$[1]"),
        ("acp_reply", ["3", "allow"], "$[0]"),
        ("acp_reply", [3, object()], "not a value Lua sends"),
        ("acp_leaving", [1], "at most length 0"),
        ("acp_log_save", [""], "at least length 2"),
        ("acp_elicitation_check", [{"title": "Name"}, "Ada"], "`kind`"),
        ("AcpNvimBootstrap", [{**BOOT, "setup": {"generation": "one"}}], "$[0].setup.generation"),
    ],
)
def test_a_malformed_call_is_refused_naming_where(name: str, args: list[object], says: str) -> None:
    with pytest.raises(msgspec.ValidationError) as err:
        BY_NAME[name].bind(args)
    assert says in str(err.value) and "\n" not in str(err.value)


class NeverCalled:
    """Neovim, for a call refused before anything reaches it."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the door reached Neovim ({name}) for a malformed call")


def test_a_malformed_synchronous_call_answers_why_and_logs_it(caplog: pytest.LogCaptureFixture) -> None:
    host = Host(NeverCalled())  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="acp_nvim.host"):
        answer = host.call(BY_NAME["acp_log_save"], [None])
    assert isinstance(answer, dict) and str(answer[hm.BAD_CALL]).startswith("malformed call acp_log_save: ")
    assert "at least length 2" in str(answer[hm.BAD_CALL])
    assert "malformed call from Lua: acp_log_save" in caplog.text
