"""The web game: ``koikoi serve`` (Starlette + uvicorn, SQLAlchemy storage).

Modules: :mod:`.protocol` (message schemas), :mod:`.rooms` (game sessions, no
I/O), :mod:`.records` (records and replay frames), :mod:`.catalog` (names and
card art), :mod:`.storage` (SQLAlchemy), :mod:`.hub` (rooms in memory,
connections, AI turns), :mod:`.app` (the ASGI app: ``create_app``). Importing
this package imports none of the web libraries.
"""
