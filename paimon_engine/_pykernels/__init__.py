"""Pure-Python twins of the Cython kernels (same names, same signatures, same results)."""
