"""Embedded data only: scikit-learn's bundled digits and generated tasks. Nothing is downloaded."""
