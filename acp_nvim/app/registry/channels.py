"""Which release channel of a registry agent runs: its stable entry, or its `preview` block when the user
opted in for that agent (`opts.registry.preview`) and the preview is newer.

The format's rule (FORMAT.md, "Highest of both channels wins"): `preview.version` is the newest version its
maintainers know of, so a preview at or below the stable version is not offered: the stable entry runs.
Versions compare by semver precedence: `1.9.0-preview.2` is below `1.9.0`, `preview.10` above `preview.2`.
"""

from __future__ import annotations

import msgspec

from acp_nvim.app.registry.entries import Distribution, RegistryAgent

STABLE = "stable"
PREVIEW = "preview"

# One identifier of a pre-release: (0, number, "") for a numeric one, (1, 0, text) for the others (numeric
# identifiers rank below alphanumeric ones).
_Identifier = tuple[int, int, str]


def precedence(version: str) -> tuple[tuple[int, ...], int, tuple[_Identifier, ...]]:
    """A sort key of `version` (one `entries.valid_version` passes) by semver precedence, build ignored."""
    core, _, pre = version.split("+", 1)[0].partition("-")
    numbers = tuple(int(part) for part in core.split("."))
    if not pre:
        # A release ranks above every pre-release of it.
        return numbers, 1, ()
    identifiers = tuple((0, int(word), "") if word.isdigit() else (1, 0, word) for word in pre.split("."))
    return numbers, 0, identifiers


def newer(version: str, than: str) -> bool:
    return precedence(version) > precedence(than)


def offered(agent: RegistryAgent, channel: str) -> RegistryAgent:
    """The entry that runs on `channel`: the preview's version and distribution over the stable ones when
    the channel is the preview and the preview is newer; else the entry itself."""
    preview = agent.preview
    if channel != PREVIEW or preview is None or not newer(preview.version, agent.version):
        return agent
    dist = preview.distribution
    return msgspec.structs.replace(
        agent, version=preview.version, distribution=Distribution(npx=dist.npx, uvx=dist.uvx), preview=None
    )


def on_preview(agent: RegistryAgent, channel: str) -> bool:
    """Whether `agent` runs its preview on `channel`."""
    return offered(agent, channel) is not agent
