"""Sampled images and reconstruction kernels: the data a tensor field is made from (an
image with its index-to-world map, NRRD and .npy reading; Diderot's separable kernels).
Below the front ends, so that both the Python field API (``fields/``) and the Diderot
front end (``lang/diderot/``) build on them; they import nothing of tensorlang but
``errors``."""
