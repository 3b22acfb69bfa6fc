"""Adapters from popular ways of writing an agent to interlingua agents.

Each adapter is a module of its own that imports its framework when it is
imported, so the core never pays for frameworks it does not use:

* ``interlingua.adapters.openai``      any OpenAI-compatible chat model (``interlingua[openai]``)
* ``interlingua.adapters.pydantic_ai`` a pydantic-ai ``Agent`` (``interlingua[pydantic-ai]``)
* ``interlingua.adapters.mcp``         the MCP bridge, both directions (``interlingua[mcp]``)
* ``interlingua.adapters.langgraph``   a compiled LangGraph graph (``interlingua[langgraph]``)
"""
