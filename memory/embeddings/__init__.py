"""Embeddings: the vector of an entry's (already redacted) content, by one configured
model. model.py names the interface, static_model.py the offline default whose weights
ship in its pip package, openai_compatible.py the production option, choice.py picks one
from the settings. Stored vectors and their HNSW index are memory/indexes/."""
