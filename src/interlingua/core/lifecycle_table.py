"""Prints the table of docs/lifecycle.md: ``python -m interlingua.core.lifecycle_table``.

A module of its own: run as ``-m``, ``lifecycle`` itself would be imported twice (once by
its package, once as ``__main__``), which Python warns of.
"""

from .lifecycle import markdown_table

if __name__ == "__main__":  # pragma: no cover
    print(markdown_table())
