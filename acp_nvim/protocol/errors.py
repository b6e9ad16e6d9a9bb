"""ACP's own error codes, beside JSON-RPC's (`acp_nvim/jsonrpc/errors.py`, which knows no ACP)."""

from __future__ import annotations

# The schema's ErrorCode: "authentication is required before this operation can be performed".
AUTH_REQUIRED = -32000
# The schema's ErrorCode: "a given resource, such as a session or file, was not found".
RESOURCE_NOT_FOUND = -32002
