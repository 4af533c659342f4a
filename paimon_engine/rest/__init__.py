"""The Iceberg REST catalog protocol: a server in front of our catalogs (:mod:`.server`) and the one place that
checks requirements and applies updates (:mod:`.updates`); the client is :mod:`paimon_engine.catalog.rest`. Both
need the optional ``rest`` extra (Starlette and uvicorn for the server, requests for the client)."""
