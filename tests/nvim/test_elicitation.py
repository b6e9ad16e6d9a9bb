"""Elicitation end to end: the scripted SDK agent asks, the user answers through (stubbed) vim.ui pickers,
and the exact answer the agent received is checked against the official schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.nvim.conftest import Nvim, setup_opts
from tests.nvim.test_chat import journal, scripted_agent
from tests.schema_check import assert_valid

# vim.ui.input answers from acp_test.inputs_answers ("<esc>" dismisses); vim.ui.open only records the URL.
STUBS = r"""
acp_test.inputs, acp_test.input_answers, acp_test.opened = {}, {}, {}
vim.ui.input = function(opts, on_confirm)
  table.insert(acp_test.inputs, { prompt = opts.prompt, default = opts.default })
  local answer = table.remove(acp_test.input_answers, 1)
  if answer == '<esc>' then answer = nil end
  on_confirm(answer)
end
vim.ui.open = function(url)
  table.insert(acp_test.opened, url)
  return {}
end
"""

DEPLOY = {
    "type": "object",
    "title": "Deploy",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2, "pattern": "^[A-Z]"},
        "count": {"type": "integer", "title": "Count", "minimum": 1, "maximum": 10, "default": 3},
        "ratio": {"type": "number", "title": "Ratio"},
        "confirm": {"type": "boolean", "title": "Confirm"},
        "region": {
            "type": "string",
            "title": "Region",
            "oneOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "United States"}],
        },
        "size": {"type": "string", "enum": ["s", "m", "l"]},
        "tags": {
            "type": "array",
            "title": "Tags",
            "items": {"anyOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]},
            "minItems": 1,
        },
    },
    "required": ["name", "count", "confirm", "region", "tags"],
}


def start(nvim: Nvim, tmp_path: Path, *steps: dict[str, Any]) -> None:
    scenario = {"echo": False, "turns": [[*steps, {"text": "turn over"}]]}
    agents = {"s": scripted_agent(tmp_path, scenario)}
    nvim.lua("require('acp_nvim').setup(...)", setup_opts(tmp_path, agents=agents))
    nvim.lua(STUBS)
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")


def answers(nvim: Nvim, selects: list[str], inputs: list[str] = []) -> None:  # noqa: B006
    nvim.lua("acp_test.answers, acp_test.input_answers = ...", selects, inputs)


def run_turn(nvim: Nvim) -> None:
    nvim.lua("require('acp_nvim').prompt('go')")
    nvim.wait_chat("turn over")
    nvim.wait_state("ready")


def results(tmp_path: Path, schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The agent's view of each elicitation/create answer, validated as the schema's response."""
    found = []
    for entry in journal(tmp_path):
        if entry.get("call") == "elicitation/create":
            assert entry["kind"] == "result", entry
            assert_valid(schema, "CreateElicitationResponse", entry["result"])
            found.append(entry["result"])
    return found


def selects(nvim: Nvim) -> list[dict[str, Any]]:
    return nvim.lua("return acp_test.selects")  # type: ignore[no-any-return]


def test_capabilities_are_advertised(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    start(nvim, tmp_path)
    (init,) = [e for e in journal(tmp_path) if e.get("method") == "initialize"]
    assert_valid(schema, "InitializeRequest", init["params"])
    assert init["params"]["clientCapabilities"]["elicitation"] == {"form": {}, "url": {}}


def test_form_accept(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    ask = {"mode": "form", "message": "Deploy settings?", "toolCallId": "t7", "requestedSchema": DEPLOY}
    start(nvim, tmp_path, {"elicit": ask})
    answers(
        nvim,
        ["fill", "yes", "us", "m", "a", "b", "a", "done", "yes", "us", "m", "done"],
        # name too short (asked again), count not a number (asked again), ratio left empty; then the host
        # finds "ann" fails the pattern and asks the whole form once more.
        ["x", "ann", "abc", "7", "", "Ann", "7", "2.5"],
    )
    run_turn(nvim)
    assert results(tmp_path, schema) == [
        {
            "action": "accept",
            "content": {
                "name": "Ann",
                "count": 7,
                "ratio": 2.5,
                "confirm": True,
                "region": "us",
                "size": "m",
                "tags": ["b"],
            },
        }
    ]
    shown = selects(nvim)
    assert shown[0]["prompt"] == "The agent asks (session sess-1, tool call t7): Deploy settings? — Deploy"
    assert shown[0]["items"] == ["Fill in", "Decline", "Cancel"]
    assert shown[1]["items"] == ["Yes", "No"]  # required boolean: no "leave empty"
    assert shown[2]["items"] == ["Europe", "United States"]  # titled enum shows titles
    assert shown[3]["items"] == ["s", "m", "l", "(leave empty)"]  # optional enum
    assert shown[4]["items"] == ["Done (0 chosen)", "[ ] Alpha", "[ ] Beta"]
    assert shown[6]["items"] == ["Done (2 chosen)", "[x] Alpha", "[x] Beta"]
    inputs = nvim.lua("return acp_test.inputs")
    assert inputs[0]["prompt"] == "Name *: "
    assert inputs[2]["prompt"] == "Count * (whole number from 1 to 10): " and inputs[2]["default"] == "3"
    assert inputs[4]["prompt"] == "Ratio (number): "
    # Asked again with the problem shown and the previous answers as defaults.
    assert inputs[5]["prompt"] == "Name * [Name does not match ^[A-Z]]: " and inputs[5]["default"] == "ann"
    assert inputs[6]["default"] == "7"
    assert shown[8]["items"][0] == "Yes (default)"
    assert shown[11]["items"] == ["Done (1 chosen)", "[ ] Alpha", "[x] Beta"]
    assert any("Name needs at least 2 characters" in n["msg"] for n in nvim.notes())
    assert any("Count is not a number" in n["msg"] for n in nvim.notes())


def test_form_decline_and_cancel(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    ask = {"mode": "form", "message": "Deploy?", "requestedSchema": DEPLOY}
    start(nvim, tmp_path, {"elicit": ask}, {"elicit": ask}, {"elicit": ask}, {"elicit": ask})
    answers(
        nvim,
        # declined; dismissed at once; dismissed at a field; bad count twice
        ["decline", "fill", "fill"],
        ["Ann", "<esc>", "Ann", "zero", "1.5"],
    )
    nvim.lua("table.insert(acp_test.answers, 2, 'none')")
    run_turn(nvim)
    assert [r["action"] for r in results(tmp_path, schema)] == ["decline", "cancel", "cancel", "cancel"]
    assert any("Count is not a whole number" in n["msg"] for n in nvim.notes())


def test_cancelling_the_turn_cancels_the_form(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    ask = {"mode": "form", "message": "Deploy?", "requestedSchema": DEPLOY}
    start(nvim, tmp_path, {"elicit": ask})
    answers(nvim, ["hold"])
    nvim.lua("require('acp_nvim').prompt('go')")
    nvim.wait("acp_test.held ~= nil")
    nvim.api.command("AcpCancel")
    nvim.wait_state("ready")
    nvim.wait(
        "(function() for l in io.lines(args[1]) do"
        " if l:find('elicitation/create', 1, true) then return true end end return false end)()",
        10,
        str(tmp_path / "journal.jsonl"),
    )
    assert results(tmp_path, schema) == [{"action": "cancel"}]
    # The late pick goes nowhere.
    nvim.lua("acp_test.held({ id = 'fill' })")
    assert nvim.lua("return #acp_test.inputs") == 0


def test_url_open_then_complete(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    ask = {
        "mode": "url",
        "message": "Log in to Example",
        "elicitationId": "e1",
        "url": "https://example.test/a",
    }
    start(nvim, tmp_path, {"elicit": ask}, {"complete": "e1"}, {"complete": "e1"}, {"complete": "nope"})
    answers(nvim, ["open"])
    run_turn(nvim)
    assert results(tmp_path, schema) == [{"action": "accept"}]
    assert nvim.lua("return acp_test.opened") == ["https://example.test/a"]
    (shown,) = selects(nvim)
    assert shown["prompt"] == "The agent asks (session sess-1): Log in to Example\nhttps://example.test/a"
    assert shown["items"] == ["Open https://example.test/a", "Decline", "Cancel"]
    # One "done" for the known id; the repeat and the unknown id are ignored.
    done = [n for n in nvim.notes() if "done:" in n["msg"]]
    assert [n["msg"] for n in done] == ["acp.nvim: done: Log in to Example"]


def test_url_decline_and_unsafe_scheme(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    ask = {"mode": "url", "message": "See", "elicitationId": "e2", "url": "file:///etc/passwd"}
    start(nvim, tmp_path, {"elicit": ask})
    answers(nvim, ["decline"])
    run_turn(nvim)
    assert results(tmp_path, schema) == [{"action": "decline"}]
    assert selects(nvim)[0]["items"] == ["Decline", "Cancel"]  # never opened: not a web page


def test_complete_closes_an_open_url_picker(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    ask = {
        "mode": "url",
        "message": "Authorize",
        "elicitationId": "e3",
        "url": "https://example.test/b",
        "completeAfterMs": 300,
    }
    start(nvim, tmp_path, {"elicit": ask})
    answers(nvim, ["hold"])
    run_turn(nvim)
    assert results(tmp_path, schema) == [{"action": "accept"}]
    assert [n["msg"] for n in nvim.notes() if "done:" in n["msg"]] == ["acp.nvim: done: Authorize"]
    nvim.lua("acp_test.held({ id = 'open' })")  # too late: nothing opens
    assert nvim.lua("return acp_test.opened") == []


WHEN = {
    "type": "object",
    "properties": {
        "day": {"type": "string", "title": "Day", "format": "date"},
        "tags": {
            "type": "array",
            "title": "Tags",
            "items": {"type": "string", "enum": ["a", "b", "c"]},
            "minItems": 2,
        },
    },
    "required": ["day"],
}


def test_the_host_checks_each_answer_and_says_why(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    ask = {"mode": "form", "message": "When?", "requestedSchema": WHEN}
    start(nvim, tmp_path, {"elicit": ask})
    # A day that is not in the calendar, then a real one; one tag (too few), then two.
    answers(nvim, ["fill", "a", "done", "b", "done"], ["2025-02-30", "2025-02-28"])
    run_turn(nvim)
    assert results(tmp_path, schema) == [
        {"action": "accept", "content": {"day": "2025-02-28", "tags": ["a", "b"]}}
    ]
    # Asked again at once, with the reason, not the whole form once more.
    prompts = [i["prompt"] for i in nvim.lua("return acp_test.inputs")]
    assert prompts == ["Day * (date, YYYY-MM-DD): ", "Day * (date, YYYY-MM-DD): "]
    notes = [n["msg"] for n in nvim.notes()]
    assert "acp.nvim: Day is not a valid date, YYYY-MM-DD" in notes
    assert "acp.nvim: Tags needs at least 2 choices" in notes
    assert selects(nvim)[3]["items"] == ["Done (1 chosen)", "[x] a", "[ ] b", "[ ] c"]
