"""Statistics over per-query values: ranks within a tolerance, paired tests, intervals."""
