"""The ``interlingua`` command."""
