"""Compiled Cython kernels. Import them through :mod:`paimon_engine._speedups`."""
