"""The configuration files: reading YAML with errors that name the file, the key and the line, where the
table's files are found, and the settings of the control interface and the floor.

Owns: ``files`` (``load_yaml``, ``ConfigError``, the checks of a key or a value), ``control`` (the control
interface's settings), ``floor`` (the floor's settings), ``secret_files`` (files that only their owner may read),
``text`` (how text from outside, a file's path, is shown in a message).
May import: ``drivers`` only. Imported by every other package.
"""
