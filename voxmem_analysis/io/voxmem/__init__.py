"""VoxMem releases: harness prediction lines (:mod:`.lines`, :mod:`.predictions`), the item table and
``models.csv`` (:mod:`.tables`), the release (:mod:`.release`) and error-attribution audit records
(:mod:`.attribution`)."""
