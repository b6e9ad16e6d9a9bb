"""What the property tests of the JSON-RPC layer (`tests/unit/jsonrpc/test_connection_properties.py`) and
of the whole client stack (`tests/unit/client/test_dispatch_fuzz.py`) share: their hypothesis settings, JSON
values to throw at a connection, and input cut into chunks."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st


def property_settings(max_examples: int) -> settings:
    # Each example runs a whole connection (slow by hypothesis's measure) on inputs that may be large: both
    # are the point, not a problem.
    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def json_trees(
    scalars: st.SearchStrategy[object], keys: st.SearchStrategy[str], *, width: int, max_leaves: int
) -> st.SearchStrategy[object]:
    """Any JSON value built from `scalars`: lists of up to 4 values and objects of up to `width` members,
    keyed by `keys` or by text of up to `width` characters."""
    return st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(keys | st.text(max_size=width), children, max_size=width)
        ),
        max_leaves=max_leaves,
    )


def cut(data: bytes, points: list[int]) -> list[bytes]:
    """`data` cut at `points` (taken modulo its length + 1), without empty chunks."""
    edges = sorted({p % (len(data) + 1) for p in points})
    chunks, start = [], 0
    for edge in edges:
        chunks.append(data[start:edge])
        start = edge
    chunks.append(data[start:])
    return [c for c in chunks if c]
