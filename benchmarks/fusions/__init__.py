"""The fusion catalog: one module per fusion (its math, hand-written definition, Thunder
variants, bytes moved, correctness and size group); ``catalog.py`` lists them."""
