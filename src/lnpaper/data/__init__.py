"""Embedded data only: scikit-learn's bundled digits and generated tasks. Nothing is downloaded."""

from lnpaper.data.synthetic_language import SyntheticLanguage

__all__ = ["SyntheticLanguage"]
