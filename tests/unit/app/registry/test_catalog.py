"""The registry's list on an in-memory port: a failed fetch said once and the cache kept, a stale cache
used at once and refreshed behind, the :AcpStart picker's items."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_nvim.app.port import Choice
from acp_nvim.app.registry.catalog import Catalog
from acp_nvim.app.registry.entries import this_platform
from acp_nvim.app.registry.options import RegistryOptions
from tests.registry_fixtures import Routes, binary_agent, elsewhere, package_agent, registry, serve

pytestmark = pytest.mark.anyio


class Port:
    def __init__(self, answer: str | None = None) -> None:
        self.notes: list[tuple[str, int]] = []
        self.catalogs: list[list[str]] = []
        self.selects: list[list[Choice]] = []
        self.started: list[str] = []
        self.answer = answer

    def notify(self, message: str, level: int) -> None:
        self.notes.append((message, level))

    async def select(self, prompt: str, choices: Sequence[Choice], kind: str) -> str | None:
        self.selects.append(list(choices))
        return self.answer

    def show_catalog(self, ids: list[str]) -> None:
        self.catalogs.append(ids)

    def start_agent(self, name: str) -> None:
        self.started.append(name)


class Spawner:
    def __init__(self) -> None:
        self.pending: list[Callable[[], Coroutine[Any, Any, None]]] = []

    def __call__(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        self.pending.append(fn)

    async def run(self) -> None:
        while self.pending:
            await self.pending.pop(0)()


def options(
    tmp_path: Path, url: str, max_age: float = 3600, preview: list[str] | None = None
) -> RegistryOptions:
    return RegistryOptions(
        url=url,
        max_age=max_age,
        enabled=True,
        cache_dir=str(tmp_path / "c"),
        data_dir=str(tmp_path / "d"),
        preview=preview or [],
    )


async def test_a_failed_fetch_is_said_once_and_the_cache_kept(tmp_path: Path) -> None:
    routes = Routes(files={"/r.json": registry(package_agent("one", "npx", "x", {}))})
    port, spawn = Port(), Spawner()
    now = [1000.0]
    catalog = Catalog(port, spawn, clock=lambda: now[0])
    with serve(routes) as served:
        opts = options(tmp_path, served.url("/r.json"), max_age=10)
        await catalog.load(opts)
        await spawn.run()
        assert port.catalogs[-1] == ["one"]
        routes.files.clear()
        now[0] += 60
        for _ in range(3):
            await catalog.load(opts)
            await spawn.run()
        warnings = [text for text, _ in port.notes]
        assert warnings == [
            f"ACP Registry: cannot fetch {served.url('/r.json')}: HTTP 404 Not Found"
            " (using the list fetched before)"
        ]
        assert port.catalogs[-1] == ["one"]
        # Back: fetched and shown; a later failure is news again.
        routes.files["/r.json"] = registry(package_agent("two", "npx", "x", {}))
        now[0] += 60
        await catalog.load(opts)
        await spawn.run()
        assert port.catalogs[-1] == ["two"]
        routes.files.clear()
        now[0] += 60
        await catalog.load(opts)
        await spawn.run()
        assert len(port.notes) == 2


async def test_the_picker_offers_configured_then_registry_agents(tmp_path: Path) -> None:
    listing = registry(
        package_agent("ts", "npx", "x", {}),
        binary_agent("far", "1.0.0", "https://e/a.zip", platform=elsewhere()),
        package_agent("npx-one", "npx", "x", {}),
    )
    port = Port(answer="npx-one")
    catalog = Catalog(port, Spawner())
    with serve(Routes(files={"/r.json": listing})) as served:
        with anyio.fail_after(10):
            await catalog.pick(options(tmp_path, served.url("/r.json")), ["demo", "ts"], "ts")
    (choices,) = port.selects
    assert [c.id for c in choices] == ["demo", "ts", "far", "npx-one"]
    assert choices[1].label == "ts  (configured, default)"
    assert choices[2].label.endswith(f"[binary, not available for {this_platform()}]")
    assert choices[3].label == "npx-one  Test npx-one 3.0.0 — the demo agent through npx  [npx]"
    assert port.started == ["npx-one"]


async def test_a_description_is_one_line_of_the_picker(tmp_path: Path) -> None:
    """A description with newlines (or escapes) drew lines of its own in the picker, looking like other
    agents; a long one filled it."""
    spoof = {
        **package_agent("npx-one", "npx", "x", {}),
        "description": "ok\nclaude  Claude [npx, installed]\x1b[2J",
    }
    long = {**package_agent("long", "npx", "x", {}), "description": "y" * 5000}
    port = Port()
    catalog = Catalog(port, Spawner())
    with serve(Routes(files={"/r.json": registry(spoof, long)})) as served:
        with anyio.fail_after(10):
            await catalog.pick(options(tmp_path, served.url("/r.json")), [], None)
    (choices,) = port.selects
    assert choices[0].label == "npx-one  Test npx-one 3.0.0 — ok claude  Claude [npx, installed] [2J  [npx]"
    assert len(choices[1].label) < 400 and "…" in choices[1].label
    assert all("\n" not in c.label and "\x1b" not in c.label for c in choices)


async def test_the_picker_shows_the_preview_where_the_user_chose_it(tmp_path: Path) -> None:
    """Issue 29: an agent in `opts.registry.preview` is offered at its preview's version, marked; another
    with a preview, not chosen, at its stable one."""
    previewed = {"version": "3.1.0-preview.1", "distribution": {"npx": {"package": "x@3.1.0-preview.1"}}}
    chosen = {**binary_agent("chosen", "3.0.0", "https://e/a.zip"), "preview": previewed}
    other = {**package_agent("other", "npx", "x", {}), "preview": previewed}
    port = Port()
    catalog = Catalog(port, Spawner())
    with serve(Routes(files={"/r.json": registry(chosen, other)})) as served:
        with anyio.fail_after(10):
            await catalog.pick(options(tmp_path, served.url("/r.json"), preview=["chosen"]), [], None)
    (choices,) = port.selects
    assert [c.label for c in choices] == [
        "chosen  Test chosen 3.1.0-preview.1 — the demo agent as chosen  [npx, preview]",
        "other  Test other 3.0.0 — the demo agent through npx  [npx]",
    ]
