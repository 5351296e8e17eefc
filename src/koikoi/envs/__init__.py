"""Interfaces for research: the information-state encoding and (optional) RL environments.

:mod:`koikoi.kernel.encoding` uses numpy (a dependency of koikoi). The
engine never imports this package.
"""
