"""Cost of ``import paimon_engine`` in a fresh interpreter."""


def timeraw_import():
    return """
    import paimon_engine
    """


def timeraw_import_with_batch_and_types():
    return """
    import paimon_engine.batch, paimon_engine.types, paimon_engine.encoding
    """
