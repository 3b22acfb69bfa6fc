"""What the HTTP bindings (JSON-RPC, HTTP+JSON) share: reading a request's body
and headers (``request.py``, ``request_headers.py``) and writing a stream as
server-sent events (``sse_writer.py``, with ``chunk_frames.py``'s templates)."""
