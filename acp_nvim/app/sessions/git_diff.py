"""`@diff`: the working tree's unstaged `git diff` of the session's folder, run by the host (off Neovim's main
loop, never holding the event loop), bounded in time and in the bytes read."""

from __future__ import annotations

import os
import shutil

import anyio
import anyio.abc

from acp_nvim.app.sessions.context_mentions import MAX_TEXT_CHARS, DiffMention

#: A diff is read up to this many bytes; what is longer is cut, with room left for the note that says so.
MAX_READ_BYTES = MAX_TEXT_CHARS - 1024
#: How long git may take before the mention says it failed.
TIMEOUT_S = 10.0

# No pager, no colour, no external diff driver, no lock taken on the index (the user's own git may run).
_ENV = {"GIT_PAGER": "cat", "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


async def _run(args: list[str], cwd: str) -> tuple[int, bytes, int, bytes]:
    """Exit code, the first MAX_READ_BYTES of stdout, stdout's whole size, and stderr's start. Both streams
    are read at once: git blocked on a full stderr pipe (a warning per file) would never close stdout."""
    env = {**os.environ, **_ENV}
    out, err = bytearray(), bytearray()
    size = 0

    async def read_out(stream: anyio.abc.ByteReceiveStream) -> None:
        nonlocal size
        async for chunk in stream:
            size += len(chunk)
            if len(out) < MAX_READ_BYTES:
                out.extend(chunk[: MAX_READ_BYTES - len(out)])

    async def read_err(stream: anyio.abc.ByteReceiveStream) -> None:
        async for chunk in stream:
            if len(err) < 4096:
                err.extend(chunk)

    async with await anyio.open_process(args, cwd=cwd, env=env) as process:
        assert process.stdout is not None and process.stderr is not None
        async with anyio.create_task_group() as group:
            group.start_soon(read_out, process.stdout)
            group.start_soon(read_err, process.stderr)
        code = await process.wait()
    return code, bytes(out), size, bytes(err)


async def unstaged_diff(cwd: str) -> DiffMention:
    """The unstaged diff of the files under `cwd` (the session's folder), or the fact why there is none."""
    git = shutil.which("git")
    if git is None:
        return DiffMention(fact="no_git")
    if not os.path.isdir(cwd):
        return DiffMention(fact="not_a_repository")
    try:
        with anyio.fail_after(TIMEOUT_S):
            code, out, _, _ = await _run([git, "rev-parse", "--is-inside-work-tree"], cwd)
            if code != 0 or out.strip() != b"true":
                return DiffMention(fact="not_a_repository")
            args = [git, "--no-pager", "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--", "."]
            code, out, size, err = await _run(args, cwd)
    except TimeoutError:
        return DiffMention(fact="failed", detail=f"no answer in {TIMEOUT_S:.0f} s")
    except OSError as error:
        return DiffMention(fact="failed", detail=error.strerror or str(error))
    if code != 0:
        said = err.decode("utf-8", "replace").strip().splitlines()
        return DiffMention(fact="failed", detail=said[0] if said else f"exit {code}")
    cut = size > len(out)
    text = out.decode("utf-8", "replace")
    if cut:
        # A line cut in its middle says less than the lines before it.
        text = text[: text.rfind("\n") + 1] if "\n" in text else text
    return DiffMention(text=text, fact="", cut=cut, total_bytes=size)


async def with_diffs(raw: object, cwd: str | None) -> object:
    """Lua's attachments with each `@diff` taken (the first once; it stands for the same diff): the others as
    they came."""
    if not isinstance(raw, list) or not any(_is_pending_diff(item) for item in raw):
        return raw
    import msgspec

    taken = await unstaged_diff(cwd) if cwd else DiffMention(fact="not_a_repository")
    value = msgspec.to_builtins(taken)
    value["kind"] = "diff"
    value["mention"] = True
    return [value if _is_pending_diff(item) else item for item in raw]


def _is_pending_diff(item: object) -> bool:
    return isinstance(item, dict) and item.get("kind") == "diff" and item.get("fact", "pending") == "pending"
