"""What the faces share: replays in words, the tutorial's coach, the opponents
and hints, yaku progress, rules help, the score keeper, statistics, ratings and
card art. Each module imports the game (and, for the opponents, the agents),
never a face."""
