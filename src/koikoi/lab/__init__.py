"""The lab: tools that measure players and games (the arena, analysis of records,
human agreement, benchmarks, import of recorded human games, and the shipped
human games as a dataset: :mod:`koikoi.lab.datasets`)."""
