"""The schedule: EIN program -> buffer plan + steps (loop nests or BLAS calls), shared by
every target and printable (``--emit schedule``)."""
