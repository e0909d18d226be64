"""Facts about EIN programs, never rewrites: the cost model (:mod:`.cost`), in-place
verdicts (:mod:`.inplace`, paper 002) and the ``tensorlang analyze`` report
(:mod:`.report`)."""
