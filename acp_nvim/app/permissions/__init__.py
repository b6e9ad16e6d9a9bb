"""Permissions: the rules the user made (`rules.py`, their file `rules_file.py`), the facts of a request they
are judged on (`request_paths.py`, `shell_words.py`), and the rules in use with the "always allow" choices and
`:AcpPermissions` (`service.py`)."""
