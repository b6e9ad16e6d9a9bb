"""`@diff`: the working tree's unstaged `git diff` of the session's folders (its cwd and its additional
directories: each repository once), run by the host (off Neovim's main loop, never holding the event loop),
bounded in time and in the bytes read."""

from __future__ import annotations

import os
import shutil

import anyio
import anyio.abc

from acp_nvim.app.sessions.context_mentions import MAX_TEXT_CHARS, MISSING_WORDS, DiffMention

#: A diff is read up to this many bytes; what is longer is cut, with room left for the note that says so.
MAX_READ_BYTES = MAX_TEXT_CHARS - 1024
#: How long git may take before the mention says it failed.
TIMEOUT_S = 10.0

# No pager, no colour, no external diff driver, no lock taken on the index (the user's own git may run).
_ENV = {"GIT_PAGER": "cat", "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


async def _run(args: list[str], cwd: str, limit: int = MAX_READ_BYTES) -> tuple[int, bytes, int, bytes]:
    """Exit code, the first `limit` bytes of stdout, stdout's whole size, and stderr's start. Both streams
    are read at once: git blocked on a full stderr pipe (a warning per file) would never close stdout."""
    env = {**os.environ, **_ENV}
    out, err = bytearray(), bytearray()
    size = 0

    async def read_out(stream: anyio.abc.ByteReceiveStream) -> None:
        nonlocal size
        async for chunk in stream:
            size += len(chunk)
            if len(out) < limit:
                out.extend(chunk[: limit - len(out)])

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
        return DiffMention(fact="failed", detail=_said(err, code))
    return DiffMention(text=_whole_lines(out, size), fact="", cut=size > len(out), total_bytes=size)


def _said(err: bytes, code: int) -> str:
    """Why git exited `code`: its stderr's first line."""
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return lines[0] if lines else f"exit {code}"


async def _git(args: list[str], cwd: str, limit: int = MAX_READ_BYTES) -> tuple[int, bytes, int, str]:
    """`_run` within TIMEOUT_S: its exit code, the first `limit` bytes of stdout and stdout's size, and why it
    failed ("" when it exited 0; code -1 when it could not run or did not end in time)."""
    try:
        with anyio.fail_after(TIMEOUT_S):
            code, out, size, err = await _run(args, cwd, limit)
    except TimeoutError:
        return -1, b"", 0, f"no answer in {TIMEOUT_S:.0f} s"
    except OSError as error:
        return -1, b"", 0, error.strerror or str(error)
    return code, out, size, "" if code == 0 else _said(err, code)


def _whole_lines(out: bytes, size: int) -> str:
    text = out.decode("utf-8", "replace")
    if size > len(out):
        # A line cut in its middle says less than the lines before it.
        text = text[: text.rfind("\n") + 1] if "\n" in text else text
    return text


async def unstaged_diffs(roots: list[str]) -> DiffMention:
    """The unstaged diff of every root (the session's cwd, then its additional directories): one root gives
    what `unstaged_diff` gives; more give a section per repository, each repository once (the roots inside
    it are its pathspecs), and a line per root that has none, under one budget of MAX_READ_BYTES."""
    unique = list(dict.fromkeys(roots))
    if len(unique) <= 1:
        return await unstaged_diff(unique[0]) if unique else DiffMention(fact="not_a_repository")
    git = shutil.which("git")
    if git is None:
        return DiffMention(fact="no_git")
    # Each repository's top -> the roots inside it, as paths from its top ("" is the top itself).
    repos: dict[str, list[str]] = {}
    # In the roots' order: a repository's top, or a root's fact (a repository is listed at its first root).
    order: list[str | DiffMention] = []
    for root in unique:
        where = await _locate(git, root)
        if isinstance(where, DiffMention):
            order.append(DiffMention(fact=where.fact, detail=where.detail, text=root))
            continue
        top, prefix = where
        if top not in repos:
            repos[top] = []
            order.append(top)
        repos[top].append(prefix)
    facts = {(item.fact, item.detail) for item in order if isinstance(item, DiffMention)}
    if not repos and len(facts) == 1:
        fact, detail = facts.pop()
        return DiffMention(fact=fact, detail=detail)
    # Room kept for the line each later item gives at least (a fact, or a repository's "not sent"): what is
    # after a cut is still named.
    least = [len((_fact_line(i) if isinstance(i, DiffMention) else _unsent(i)).encode()) for i in order]
    parts: list[str] = []
    used = total = 0
    cut = False
    for at, item in enumerate(order):
        if isinstance(item, DiffMention):
            part = _fact_line(item)
        else:
            room = 0 if cut else MAX_READ_BYTES - used - sum(least[at + 1 :])
            part, size, cut_here = await _section(git, item, repos[item], room)
            total += size
            cut = cut or cut_here
        parts.append(part)
        used += len(part.encode())
    if all(part.endswith(": no unstaged changes\n") for part in parts):
        return DiffMention(text="", fact="")  # said as for one folder: "no unstaged changes"
    return DiffMention(text="".join(parts), fact="", cut=cut, total_bytes=total)


def _fact_line(fact: DiffMention) -> str:
    """The line of a root that is no repository (`text`: the root)."""
    words = MISSING_WORDS.get(fact.fact, fact.fact) + (f": {fact.detail}" if fact.detail else "")
    return f"# {fact.text}: {words}\n"


def _unsent(top: str) -> str:
    return f"# git diff of the repository {top}: not sent (over the size limit)\n"


async def _locate(git: str, root: str) -> tuple[str, str] | DiffMention:
    """The top of the work tree `root` is in and `root`'s path from it, or why there is none."""
    if not os.path.isdir(root):
        return DiffMention(fact="not_a_repository")
    code, out, _, why = await _git([git, "rev-parse", "--show-toplevel", "--show-prefix"], root)
    if code < 0:
        return DiffMention(fact="failed", detail=why)
    lines = os.fsdecode(out).split("\n")
    # Outside a work tree (or in its .git) git fails: as `--is-inside-work-tree` does for one root.
    if code != 0 or len(lines) < 2 or not lines[0]:
        return DiffMention(fact="not_a_repository")
    return lines[0], lines[1].rstrip("/")


def _header(top: str, prefixes: list[str]) -> str:
    # A comment line per repository rather than `--src-prefix`/`--dst-prefix` carrying the folder: each
    # section stays the diff git and every agent know (`a/` and `b/` paths, applied with `git apply` in that
    # repository), and the one line says where its paths start, whichever root the agent reads it from.
    only = "" if "" in prefixes else f", only {', '.join(prefix + '/' for prefix in prefixes)}"
    return f"# git diff of the repository {top}{only} (paths relative to {top}):\n"


async def _section(git: str, top: str, prefixes: list[str], limit: int) -> tuple[str, int, bool]:
    """One repository's part (its header and at most `limit` bytes of its diff, whole lines), its diff's
    whole size, and whether that part is cut."""
    header = _header(top, prefixes)
    limit = max(limit - len(header.encode()), 0)
    # From the top, `--no-relative`: the paths are the top's whatever `diff.relative` the user set.
    # The roots' paths as they are (`--literal-pathspecs`: a folder named `[x]` is no pattern).
    args = [git, "--no-pager", "--literal-pathspecs", "diff", "--no-color", "--no-ext-diff", "--no-textconv"]
    args += ["--no-relative", "--", *(["."] if "" in prefixes else prefixes)]
    said = f"# git diff of the repository {top}"
    code, out, size, why = await _git(args, top, limit)
    if code != 0:
        return f"{said}: git diff failed: {why}\n", 0, False
    if size == 0:
        return f"{said}: no unstaged changes\n", 0, False
    text = _whole_lines(out, size)
    if size > len(out) and not text.endswith("\n"):
        text = ""
    if not text:
        return _unsent(top), size, True
    return header + text, size, size > len(out)


async def with_diffs(raw: object, roots: list[str] | None) -> object:
    """Lua's attachments with each `@diff` taken (the first once; it stands for the same diff) in the
    session's `roots` (its cwd first): the others as they came."""
    if not isinstance(raw, list) or not any(_is_pending_diff(item) for item in raw):
        return raw
    import msgspec

    taken = await unstaged_diffs(roots) if roots else DiffMention(fact="not_a_repository")
    value = msgspec.to_builtins(taken)
    value["kind"] = "diff"
    value["mention"] = True
    return [value if _is_pending_diff(item) else item for item in raw]


def _is_pending_diff(item: object) -> bool:
    return isinstance(item, dict) and item.get("kind") == "diff" and item.get("fact", "pending") == "pending"
