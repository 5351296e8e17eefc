"""The lab: tools that measure players and games (the arena, analysis of records,
agreement with human records, benchmarks, import of recorded human games)."""
