"""Interfaces for research: the information-state encoding and (optional) RL environments.

:mod:`koikoi.kernel.encoding` needs numpy (``pip install 'koikoi[fast]'``). The
engine never imports this package.
"""
