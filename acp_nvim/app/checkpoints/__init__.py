"""Checkpoints: a restore point of the session's folders at every prompt (`service.py`), the shadow
repository's snapshots and their restore (`restore.py`), the record of them kept per session (`store.py`)."""
