"""Screenshots of the chat for the README: Neovim in tmux (200x50) on a scratch project, connected to the
demo agent, one prompt turn (thought, plan, a read, an edit asked for, a terminal); each screen captured
with its colours (`tmux capture-pane -e`), turned into HTML (ansi2html) and drawn to PNG by headless
Chromium. Run through `scripts/screenshots`, which installs what this needs or says what is missing.

    .venv/bin/python tools/screenshots.py [--out docs/img]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from ansi2html import Ansi2HTMLConverter

ROOT = Path(__file__).resolve().parent.parent
COLUMNS, LINES = 200, 50
# Pixels of a cell at the page's font size (DejaVu Sans Mono at 14 px): the window fits the screen exactly.
CELL_WIDTH, CELL_HEIGHT = 8.43, 17
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]

PAGE = """<!doctype html>
<html><head><meta charset="utf-8">{headers}<style>
body {{ margin: 0; background: #14161b; }}
pre.ansi2html-content {{
  display: block; margin: 0; padding: 0; font: 14px/{line}px "DejaVu Sans Mono", monospace; color: #e0e2ea;
}}
/* A cell's background fills its line's height, as in a terminal (padding does not move the lines). */
pre span {{ padding: 1px 0; }}
</style></head><body><pre class="ansi2html-content">{body}</pre></body></html>
"""


def project(folder: Path, log: Path) -> Path:
    """The demo's scratch project and the Neovim set-up that opens it with the chat (as scripts/demo)."""
    (folder / "README.md").write_text(
        "# Demo project\n\nA scratch project for the acp.nvim demo agent. It reads this file, edits"
        " `hello.py` (after asking you) and runs\na command in a Neovim terminal.\n"
    )
    (folder / "hello.py").write_text(
        'def greet(name):\n    return "Hello, " + name\n\n\nprint(greet("world"))\n'
    )
    init = folder / ".screenshots-init.lua"
    python = ROOT / ".venv" / "bin" / "python"
    init.write_text(
        f"""
vim.opt.runtimepath:prepend({json.dumps(str(ROOT))})
vim.o.laststatus = 2
vim.o.statusline = "%f %= %{{v:lua.require'acp_nvim'.statusline()}} "
require("acp_nvim").setup({{
  python = {json.dumps(str(python))},
  default_agent = "demo",
  log = {{ file = {json.dumps(str(log))} }},
  agents = {{ demo = {{ env = {{ ACP_DEMO_DELAY_MS = "5" }} }} }},
  chat = {{ width = 90 }},
}})
vim.api.nvim_create_autocmd("VimEnter", {{
  once = true,
  callback = function()
    vim.cmd("edit hello.py")
    vim.cmd("AcpStart demo")
    vim.cmd("AcpChat")
  end,
}})
"""
    )
    return init


class Screen:
    """Neovim in a tmux session of its own."""

    def __init__(self, folder: Path, init: Path) -> None:
        self.name = f"acp-screens-{uuid.uuid4().hex[:8]}"
        env = " ".join(
            f"{key}={folder / key.lower()}" for key in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME")
        )
        nvim = ROOT / ".venv" / "bin" / "nvim"
        command = f"cd {folder} && env {env} TERM=xterm-256color COLORTERM=truecolor {nvim} --clean -u {init}"
        subprocess.run(
            ["tmux", "new-session", "-d", "-x", str(COLUMNS), "-y", str(LINES), "-s", self.name, command],
            check=True,
        )

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def text(self, colours: bool = False) -> str:
        args = ["tmux", "capture-pane", "-p", "-t", self.name] + (["-e"] if colours else [])
        return subprocess.run(args, check=True, capture_output=True, text=True).stdout

    def wait(self, *texts: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.text()
            if all(text in screen for text in texts):
                return
            time.sleep(0.1)  # polling the terminal: there is no event to wait on from outside
        raise SystemExit(f"screenshots: not all of {texts} on screen after {timeout} s:\n{self.text()}")

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], check=False, capture_output=True)


def to_png(ansi: str, out: Path, chromium: str, scratch: Path) -> None:
    converter = Ansi2HTMLConverter(dark_bg=True, line_wrap=False)
    body = converter.convert(ansi, full=False)
    page = scratch / (out.stem + ".html")
    page.write_text(PAGE.format(headers=converter.produce_headers(), line=CELL_HEIGHT, body=body))
    size = f"--window-size={int(COLUMNS * CELL_WIDTH) + 1},{LINES * CELL_HEIGHT}"
    profile = scratch / "chromium-profile"
    subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={out}", size, page.as_uri()],
        check=True,
        capture_output=True,
    )
    print(f"screenshots: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "doc" / "img")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None or shutil.which("tmux") is None:
        sys.exit("screenshots: needs tmux and chromium (Debian: apt-get install tmux chromium)")
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="acp-screens-") as scratch_name:
        scratch = Path(scratch_name)
        folder = scratch / "project"
        folder.mkdir()
        screen = Screen(folder, project(folder, scratch / "acp.log"))
        try:
            shoot(screen, out, chromium, scratch)
        finally:
            screen.close()


def shoot(screen: Screen, out: Path, chromium: str, scratch: Path) -> None:
    screen.wait("acp.nvim demo agent", "ready")
    screen.keys("Escape", ":AcpPrompt show me the tour", "Enter")
    # The edit waits for the user's answer: its diff is shown, the picker below.
    screen.wait("awaiting permission", "Allow this edit")
    to_png(screen.text(colours=True), out / "chat-permission.png", chromium, scratch)
    screen.keys("1", "Enter")
    screen.wait("That's the tour.", "ready")
    # The finished turn, as it stays: one header, thoughts and each tool call's details folded.
    screen.keys(":wincmd k", "Enter", "gg", ":echo", "Enter")  # (an empty command line)
    to_png(screen.text(colours=True), out / "chat-turn.png", chromium, scratch)
    # <CR> on a tool call opens its details: the edit's diff, the terminal's output.
    for title in ("Edit hello.py", "Run `"):
        # search() moves the cursor without opening folds (a / search would, by 'foldopen').
        screen.keys(f":call search('{title}')", "Enter", "Enter")
    screen.keys("gg", ":echo", "Enter")
    screen.wait("+# Edited by the acp.nvim demo agent")
    to_png(screen.text(colours=True), out / "chat-details.png", chromium, scratch)


if __name__ == "__main__":
    main()
