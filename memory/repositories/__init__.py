"""One repository per concern of the store; memory/store.py is the facade over them.

Each repository takes a typed ``MemoryRef`` (parsed once, by the facade) and the
``Database`` handle (memory/transactions.py); writes accept ``within=`` to join a
caller's transaction. Repositories build tenant scoping only through memory/scope.py and
advisory locks only through memory/locks.py, and never import the facade.
"""
