"""Cost of ``import paimon_engine`` in a fresh interpreter."""
import os

#: the checkout these benchmarks belong to: a fresh interpreter (``timeraw_*``) imports paimon_engine from it (asv
#: puts a checkout on the benchmark process's path, not on its children's)
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def timeraw_import():
    return "import paimon_engine\n", f"import sys; sys.path.insert(0, {_CHECKOUT!r})\n"


def timeraw_import_with_batch_and_types():
    return ("import paimon_engine.batch, paimon_engine.types, paimon_engine.encoding\n",
            f"import sys; sys.path.insert(0, {_CHECKOUT!r})\n")
