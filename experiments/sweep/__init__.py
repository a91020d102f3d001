"""`task: strength_sweep`: one generator at several levels of one dial (or of its strength ladder) on the same
seeds, every target on each level's accepted cases; per level attack success, yield and paired differences
against the default level, plotted."""
