"""Transport bindings in front of the server's front door (``server/dispatch.py``)."""
