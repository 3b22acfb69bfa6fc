"""Options that take seconds: ``click.FloatRange`` without NaN.

``click.FloatRange`` compares its bounds with ``<``, which NaN never fails: ``nan``
passes every range and would reach a timer or a timeout as a number of seconds.
"""

from __future__ import annotations

import math
from typing import Any

import click

__all__ = ["Seconds"]


class Seconds(click.FloatRange):
    """``click.FloatRange`` that refuses ``nan``; its bounds as ``FloatRange``'s."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if isinstance(number, float) and math.isnan(number):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        return number
