"""Fuzzing of every decoder: targets, seed corpora and the driver behind ``make fuzz``."""
