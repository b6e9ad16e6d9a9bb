"""The @-mentions of what Neovim knows (issue 28), end to end: typed in the prompt window of a real Neovim,
sent to the scripted SDK agent, whose journal holds the `session/prompt` as received (each block checked
against the official schema by `prompts`), with and without `promptCapabilities.embeddedContext`."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench.harness import wait_until
from tests.nvim.conftest import Nvim, setup_opts
from tests.nvim.test_chat import scripted_agent
from tests.nvim.test_prompt_blocks import prompt_buf, sent, start, type_and_send

EMBEDDED = {"embeddedContext": True}
PYLSP = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "pylsp"


def set_diagnostics(nvim: Nvim, path: Path, items: list[dict[str, Any]]) -> None:
    """Opens `path` and gives it diagnostics, as a linter or a language server would."""
    nvim.api.command(f"edit {path}")
    nvim.lua(
        "local ns = vim.api.nvim_create_namespace('acp_test_lint')\n"
        "vim.diagnostic.set(ns, vim.api.nvim_get_current_buf(), ...)",
        items,
    )


def chat_lines(nvim: Nvim) -> str:
    return "\n".join(nvim.lua("return require('acp_nvim.ui.chat').lines()"))


LINT = [
    {"lnum": 1, "col": 4, "severity": 1, "source": "pyflakes", "message": "undefined name 'y'"},
    {"lnum": 0, "col": 0, "severity": 2, "source": "pycodestyle", "code": "E999", "message": "odd start"},
]
LINT_TEXT = (
    "Diagnostics (file:line:column: severity: message [source]), 2 in app.py:\n"
    "app.py:1:1: warning: odd start [pycodestyle: E999]\n"
    "app.py:2:5: error: undefined name 'y' [pyflakes]"
)


def test_diagnostics_as_link_and_text(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    app = tmp_path / "app.py"
    app.write_text("x = 1\nprint(y)\n")
    start(nvim, tmp_path, None)
    set_diagnostics(nvim, app, LINT)
    type_and_send(nvim, "fix @diagnostics")
    assert sent(nvim, tmp_path, schema) == [
        {"type": "text", "text": "fix @diagnostics"},
        {
            "type": "resource_link",
            "uri": "acp-nvim:///diagnostics",
            "name": "diagnostics",
            "title": "diagnostics",
        },
        {"type": "text", "text": f"@diagnostics:\n```\n{LINT_TEXT}\n```"},
    ]
    nvim.wait_chat("fix @diagnostics\n@diagnostics: 2 in app.py")


def test_a_message_not_in_utf8_is_sent_with_replacement_characters(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    app = tmp_path / "app.py"
    app.write_text("x = 1\n")
    start(nvim, tmp_path, EMBEDDED)
    nvim.api.command(f"edit {app}")
    nvim.lua(
        "vim.diagnostic.set(vim.api.nvim_create_namespace('latin1'), 0,"
        " { { lnum = 0, col = 0, severity = 1, message = 'caf\\233 au lait' } })"
    )
    type_and_send(nvim, "@diagnostics")
    blocks = sent(nvim, tmp_path, schema)
    assert blocks[1]["resource"]["text"].endswith("app.py:1:1: error: caf\ufffd au lait")
    assert nvim.errors() == []


def test_diagnostics_embedded_and_all_buffers(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    app = tmp_path / "app.py"
    app.write_text("x = 1\nprint(y)\n")
    other = tmp_path / "lib.py"
    other.write_text("import os\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    outside.write_text("z\n")
    start(nvim, tmp_path, EMBEDDED)
    set_diagnostics(nvim, other, [{"lnum": 0, "col": 0, "severity": 3, "message": "unused import"}])
    set_diagnostics(nvim, outside, [{"lnum": 0, "col": 0, "severity": 1, "message": "SECRET-OUTSIDE"}])
    set_diagnostics(nvim, app, LINT)
    type_and_send(nvim, "fix @diagnostics, then @diagnostics:all.")
    blocks = sent(nvim, tmp_path, schema)
    assert blocks[:2] == [
        {"type": "text", "text": "fix @diagnostics, then @diagnostics:all."},
        {
            "type": "resource",
            "resource": {"uri": "acp-nvim:///diagnostics", "mimeType": "text/plain", "text": LINT_TEXT},
        },
    ]
    every = blocks[2]["resource"]
    assert every["uri"] == "acp-nvim:///diagnostics/all" and len(blocks) == 3
    assert "lib.py:1:1: info: unused import" in every["text"] and "app.py:2:5: error" in every["text"]
    # A buffer outside the session's folders is not sent; the chat names it.
    assert "SECRET-OUTSIDE" not in every["text"]
    nvim.wait_chat("@diagnostics:all: 3 in 2 files; left out, outside the session's folders: " + str(outside))
    os.unlink(outside)


def test_empty_mentions_say_so(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    app = tmp_path / "app.py"
    app.write_text("x = 1\n")
    start(nvim, tmp_path, None)
    nvim.api.command(f"edit {app}")
    type_and_send(nvim, "@diagnostics @quickfix @selection @symbol:Nothing @diff")
    blocks = sent(nvim, tmp_path, schema)
    assert blocks == [
        {"type": "text", "text": "@diagnostics @quickfix @selection @symbol:Nothing @diff"},
        {"type": "text", "text": "@diagnostics: none (app.py)"},
        {"type": "text", "text": "@quickfix: none (the list is empty)"},
        {"type": "text", "text": "@selection: none (no visual selection)"},
        {"type": "text", "text": "@symbol:Nothing: none (no language server)"},
        {"type": "text", "text": "@diff: none (not a git repository)"},
    ]
    nvim.wait_chat("@diagnostics: none (app.py)\n@quickfix: none (the list is empty)\n@selection: none")
    nvim.wait_chat("@diff: none (not a git repository)")
    assert nvim.errors() == []


def test_selection_buffers_and_quickfix(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    app = tmp_path / "app.py"
    app.write_text("one\ntwo\nthree\n")
    notes = tmp_path / "notes.md"
    notes.write_text("n\n")
    start(nvim, tmp_path, None)
    nvim.api.command(f"edit {notes}")
    nvim.api.command("call setline(1, 'changed')")
    nvim.api.command(f"edit! {app}" if False else f"hide edit {app}")
    nvim.api.feedkeys(nvim.api.replace_termcodes("2GVj<Esc>", True, False, True), "x", False)
    nvim.lua(
        "vim.fn.setqflist({}, ' ', { title = 'grep two', items = {"
        " { filename = ..., lnum = 2, col = 1, text = 'two', type = 'W' },"
        " { filename = '/etc/hostname', lnum = 1, col = 1, text = 'SECRET-QF' } } })",
        str(app),
    )
    type_and_send(nvim, "see @selection @buffers @quickfix")
    blocks = sent(nvim, tmp_path, schema)
    uri = app.as_uri() + "#L2-L3"
    assert blocks[:3] == [
        {"type": "text", "text": "see @selection @buffers @quickfix"},
        {"type": "resource_link", "uri": uri, "name": "app.py:2-3", "title": "app.py:2-3"},
        {"type": "text", "text": "app.py:2-3:\n```python\ntwo\nthree\n```"},
    ]
    assert blocks[3]["uri"] == "acp-nvim:///buffers"
    listing = blocks[4]["text"]
    assert (
        "app.py (python, 3 lines)" in listing and "notes.md (markdown, 1 lines, modified, unsaved)" in listing
    )
    assert blocks[5]["uri"] == "acp-nvim:///quickfix"
    assert "The quickfix list (grep two):\napp.py:2:1: warning: two" in blocks[6]["text"]
    assert "SECRET-QF" not in blocks[6]["text"]
    nvim.wait_chat("@selection: app.py:2-3\n@buffers: 2, 1 unsaved\n@quickfix: 1 entries; left out")


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    subprocess.run(["git", *args], cwd=cwd, check=True, env=env, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
@pytest.mark.parametrize("embedded", [False, True])
def test_diff_in_a_repository(nvim: Nvim, tmp_path: Path, schema: dict[str, Any], embedded: bool) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "app.py").write_text("a = 1\n")
    (tmp_path / "staged.py").write_text("s = 1\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "one")
    (tmp_path / "app.py").write_text("a = 2\n")
    (tmp_path / "staged.py").write_text("s = 2\n")
    git(tmp_path, "add", "staged.py")
    start(nvim, tmp_path, EMBEDDED if embedded else None)
    type_and_send(nvim, "review @diff")
    blocks = sent(nvim, tmp_path, schema)
    text = blocks[1]["resource"]["text"] if embedded else blocks[2]["text"]
    assert "-a = 1\n+a = 2" in text and "staged.py" not in text  # unstaged only
    if embedded:
        assert blocks[1]["resource"]["uri"] == "acp-nvim:///diff"
        assert blocks[1]["resource"]["mimeType"] == "text/x-diff"
    else:
        assert blocks[1] == {
            "type": "resource_link",
            "uri": "acp-nvim:///diff",
            "name": "diff",
            "title": "diff",
        }
        assert text.startswith(
            "@diff:\n```diff\nThe unstaged changes (git diff):\ndiff --git a/app.py b/app.py"
        )
    nvim.wait_chat("review @diff\n@diff: 1 file")


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_a_huge_diff_is_cut(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    git(tmp_path, "init", "-q")
    big = tmp_path / "big.txt"
    big.write_text("".join(f"line {i}\n" for i in range(40000)))
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "one")
    big.write_text("".join(f"LINE {i}\n" for i in range(40000)))
    start(nvim, tmp_path, EMBEDDED)
    type_and_send(nvim, "@diff")
    text = sent(nvim, tmp_path, schema)[1]["resource"]["text"]
    assert len(text) < 70 * 1024
    assert "[cut: the diff is" in text
    nvim.wait_chat("@diff: 1 file (cut)")


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_diff_of_every_folder_of_the_session(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    """A session with additional directories: each repository's changes, under a line naming it."""
    repos = {"app": tmp_path / "app", "lib": tmp_path / "lib"}
    for name, path in repos.items():
        path.mkdir()
        git(path, "init", "-q")
        (path / f"{name}.py").write_text("v = 1\n")
        git(path, "add", ".")
        git(path, "commit", "-qm", "one")
        (path / f"{name}.py").write_text("v = 2\n")
    notes = tmp_path / "notes"
    notes.mkdir()
    caps = {"promptCapabilities": EMBEDDED, "sessionCapabilities": {"additionalDirectories": {}}}
    scenario = {"echo": False, "agentCapabilities": caps}
    agents = {"s": scripted_agent(tmp_path, scenario)}
    nvim.api.command(f"cd {repos['app']}")  # the session's folder: Neovim's when the agent starts
    extra = [str(repos["lib"]), str(notes)]
    nvim.lua(
        "require('acp_nvim').setup(...)", setup_opts(tmp_path, agents=agents, additional_directories=extra)
    )
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    type_and_send(nvim, "review @diff")
    text = sent(nvim, tmp_path, schema)[1]["resource"]["text"]
    app, lib = repos["app"], repos["lib"]
    head_app = (
        f"# git diff of the repository {app} (paths relative to {app}):\ndiff --git a/app.py b/app.py\n"
    )
    head_lib = (
        f"# git diff of the repository {lib} (paths relative to {lib}):\ndiff --git a/lib.py b/lib.py\n"
    )
    assert text.startswith("The unstaged changes (git diff):\n" + head_app)
    assert text.index("-v = 1\n+v = 2\n") < text.index(head_lib)
    assert text.endswith(f"-v = 1\n+v = 2\n# {notes}: not a git repository\n")
    assert text.count("diff --git ") == 2
    nvim.wait_chat("review @diff\n@diff: 2 files")


def test_completion_offers_the_mentions(nvim: Nvim, tmp_path: Path) -> None:
    (tmp_path / "diffutils.py").write_text("")
    start(nvim, tmp_path, None)
    nvim.lua("vim.api.nvim_set_current_win(vim.fn.win_findbuf(...)[1])", prompt_buf(nvim))
    words = nvim.lua(
        "return vim.tbl_map(function(i) return i.word end, require('acp_nvim.ui.prompt').omnifunc(0, '@'))"
    )
    assert words[:7] == [
        "@diagnostics",
        "@diagnostics:all",
        "@symbol:",
        "@selection",
        "@buffers",
        "@quickfix",
        "@diff",
    ]
    assert "@diffutils.py" in words
    items = nvim.lua("return require('acp_nvim.ui.prompt').omnifunc(0, '@dif')")
    assert [(i["word"], i["menu"]) for i in items] == [("@diff", "[neovim]"), ("@diffutils.py", "[file]")]
    assert nvim.lua("return require('acp_nvim.ui.prompt').omnifunc(0, '@symbol:x')") == []


SOURCE = '''\
class Greeter:
    """Says hello."""

    def greet(self, name):
        return "hello " + name


def farewell():
    return "bye"
'''


@pytest.mark.skipif(not PYLSP.exists(), reason="python-lsp-server not installed in the venv")
@pytest.mark.parametrize("embedded", [False, True])
def test_symbol_from_a_language_server(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any], embedded: bool
) -> None:
    project = tmp_path
    (project / "greeting.py").write_text(SOURCE)
    start(nvim, tmp_path, EMBEDDED if embedded else None)
    nvim.api.command(f"edit {project / 'greeting.py'}")
    nvim.lua(
        "local pylsp, root = ...\nvim.lsp.start({ name = 'pylsp', cmd = { pylsp }, root_dir = root })",
        str(PYLSP),
        str(project),
    )
    nvim.wait("#vim.lsp.get_clients({ name = 'pylsp' }) > 0 and vim.lsp.get_clients()[1].initialized", 30)
    # Completion asks the server without waiting; the answer fills it.
    nvim.lua("vim.api.nvim_set_current_win(vim.fn.win_findbuf(...)[1])", prompt_buf(nvim))
    nvim.lua("require('acp_nvim.ui.prompt').omnifunc(0, '@symbol:Gree')")
    nvim.wait("require('acp_nvim.ui.prompt.symbols').known('Gree') ~= nil", 30)
    items = nvim.lua("return require('acp_nvim.ui.prompt').omnifunc(0, '@symbol:Gree')")
    # Matched without regard to case, the exact name first.
    assert [(i["word"], i["menu"]) for i in items] == [
        ("@symbol:Greeter", "[Class] greeting.py:1"),
        ("@symbol:greet", "[Method] greeting.py:4"),
    ]
    nvim.lua("require('acp_nvim.ui.prompt').omnifunc(0, '@symbol:farew')")
    nvim.wait("require('acp_nvim.ui.prompt.symbols').known('farew') ~= nil", 30)
    items = nvim.lua("return require('acp_nvim.ui.prompt').omnifunc(0, '@symbol:farew')")
    assert [i["word"] for i in items] == ["@symbol:farewell"]
    type_and_send(nvim, "explain @symbol:Greeter")
    blocks = sent(nvim, tmp_path, schema)
    uri = (project / "greeting.py").as_uri() + "#L1-L5"
    body = SOURCE.split("\n\n\n")[0]
    if embedded:
        assert blocks[1] == {"type": "resource", "resource": {"uri": uri, "text": body}}
    else:
        title = "class Greeter (greeting.py:1)"
        assert blocks[1] == {"type": "resource_link", "uri": uri, "name": "Greeter", "title": title}
        assert blocks[2] == {"type": "text", "text": f"{title}:\n```python\n{body}\n```"}
    nvim.wait_chat("explain @symbol:Greeter\n@symbol:Greeter: class greeting.py:1")
    # A name not completed since the last send is asked for at the send.
    type_and_send(nvim, "and @symbol:farewell")
    blocks = sent(nvim, tmp_path, schema, 2)
    assert "def farewell():" in str(blocks)
    # A name no server knows is no error.
    type_and_send(nvim, "and @symbol:Nobody")
    assert sent(nvim, tmp_path, schema, 3)[1] == {
        "type": "text",
        "text": "@symbol:Nobody: none (no such symbol)",
    }


@pytest.mark.skipif(not PYLSP.exists(), reason="python-lsp-server not installed in the venv")
def test_symbols_complete_as_you_type(nvim: Nvim, tmp_path: Path) -> None:
    """Typing `@symbol:fare` in the prompt shows the server's matching symbols in the menu once it answers,
    without a key to ask again, and the editor answers meanwhile."""
    (tmp_path / "greeting.py").write_text(SOURCE)
    start(nvim, tmp_path, None)
    nvim.api.command(f"edit {tmp_path / 'greeting.py'}")
    nvim.lua(
        "local pylsp, root = ...\nvim.lsp.start({ name = 'pylsp', cmd = { pylsp }, root_dir = root })",
        str(PYLSP),
        str(tmp_path),
    )
    nvim.wait("#vim.lsp.get_clients({ name = 'pylsp' }) > 0 and vim.lsp.get_clients()[1].initialized", 30)
    nvim.lua("vim.api.nvim_set_current_win(vim.fn.win_findbuf(...)[1])", prompt_buf(nvim))
    nvim.api.feedkeys("ilook at @symbol:fare", "t", False)

    def menu() -> list[str]:
        info = nvim.lua("return vim.fn.complete_info({ 'items' })")
        return [item["word"] for item in info.get("items", [])]

    wait_until(lambda: menu() == ["@symbol:farewell"], 30, "the symbol in the menu")
    # Nothing typed was replaced by a menu item.
    assert nvim.lua("return vim.api.nvim_get_current_line()") == "look at @symbol:fare"
    assert nvim.api.api.get_mode()["mode"].startswith("i")
    assert nvim.errors() == []


def test_a_queued_prompt_edited_reads_its_mentions_again(nvim: Nvim, tmp_path: Path) -> None:
    from tests.nvim.test_prompt_queue import hold_first, prompts

    journal = hold_first(nvim, tmp_path)
    nvim.lua("require('acp_nvim').prompt(...)", "later")
    nvim.wait("#acp_test_queue() == 2")
    nvim.api.command("AcpQueue edit 1")
    nvim.api.current.buffer[:] = ["later @quickfix @diff"]
    nvim.api.command("write")
    # The queue shows what it will send, the mentions read again.
    nvim.wait("(acp_test_queue()[2] or ''):find('later @quickfix @diff ↵ @quickfix: none', 1, true)")
    nvim.lua("acp_test.held({ id = 'allow' })")
    nvim.wait_chat(
        "later @quickfix @diff\n@quickfix: none (the list is empty)\n@diff: none (not a git repository)"
    )
    nvim.wait_state("ready")
    assert prompts(journal)[1] == (
        "later @quickfix @diff @quickfix: none (the list is empty) @diff: none (not a git repository)"
    )


def test_diagnostics_beyond_the_limit_are_counted_and_the_folders_come_first(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-aaa-outside.py"
    outside.write_text("".join(f"v{i} = 1\n" for i in range(2500)))
    app = tmp_path / "zzz.py"
    app.write_text("x\n")
    start(nvim, tmp_path, EMBEDDED)
    many = [{"lnum": i, "col": 0, "severity": 2, "message": f"outside {i}"} for i in range(2500)]
    set_diagnostics(nvim, outside, many)
    set_diagnostics(nvim, app, [{"lnum": 0, "col": 0, "severity": 1, "message": "the one inside"}])
    type_and_send(nvim, "@diagnostics:all")
    text = sent(nvim, tmp_path, schema)[1]["resource"]["text"]
    # The buffer under the session's folder is gathered first, though its name sorts last.
    assert "zzz.py:1:1: error: the one inside" in text and "outside 0" not in text
    assert "not gathered" not in text
    # The count is of the diagnostics inside: those outside, gathered or not, are only named.
    nvim.wait_chat("@diagnostics:all: 1 in zzz.py; left out, outside the session's folders: " + str(outside))
    os.unlink(outside)


def test_a_characterwise_selection_keeps_whole_characters(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("say héllo wörld\n")
    start(nvim, tmp_path, EMBEDDED)
    nvim.api.command(f"edit {notes}")
    # From the "h" to the "é" after it, then Escape: '< and '> hold the selection.
    nvim.api.feedkeys(nvim.api.replace_termcodes("0fhvl<Esc>", True, False, True), "x", False)
    type_and_send(nvim, "what is @selection?")
    blocks = sent(nvim, tmp_path, schema)
    assert blocks[1] == {"type": "resource", "resource": {"uri": notes.as_uri() + "#L1-L1", "text": "hé"}}
    nvim.wait_chat("what is @selection?\n@selection: notes.txt:1")
