"""The Iceberg REST catalog protocol: a server in front of our catalogs (:mod:`.server`) and a client
(:mod:`.client`). Both need the optional ``rest`` extra (Starlette and uvicorn for the server, requests for the
client)."""
