"""The math the explorer draws: tie anatomy, the scoring-function builder, precision what-ifs."""
