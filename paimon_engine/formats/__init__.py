"""File formats: Paimon ``.row`` files (:mod:`paimon_engine.formats.row`)."""
