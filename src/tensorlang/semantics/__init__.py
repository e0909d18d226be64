"""Meaning shared by every front end, evaluator, pass and target; imports nothing above it.

* :mod:`.values`: ⊥, controlled division, the function table, reductions, ε;
* :mod:`.interface`: roles (in/out/inout/optional/temp) and the initial store;
* :mod:`.types`: shapes, the context Γ, the program rule every front end shares.
"""
