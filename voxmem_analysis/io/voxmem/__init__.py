"""VoxMem releases: prediction lines, item table, ``models.csv``, the release and audit records."""
