"""Files on disk: a write no buffer holds (`disk.py`), the files an agent's own tool calls edit
(`agent_edits.py`, `snapshot_fit.py`), the shadow git repository behind checkpoints (`shadow_git.py`) and a
folder restored from it (`restore_files.py`)."""
