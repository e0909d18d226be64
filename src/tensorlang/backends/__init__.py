"""Kept only for ``bench/contenders.py`` until the bench harness leaves the package
(issue 14): the back ends are :mod:`tensorlang.targets`.  Delete with ``bench/``."""

from __future__ import annotations

from ..targets import KNOWN, available, resolve

__all__ = ["KNOWN", "available", "resolve"]


def __getattr__(name: str):
    if name == "AVAILABLE":  # computed on first use: probing the compiler takes a moment
        return available()
    raise AttributeError(name)
