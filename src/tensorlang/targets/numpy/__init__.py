"""The NumPy target: EIN statements as generated einsum / BLAS calls (codegen)."""
