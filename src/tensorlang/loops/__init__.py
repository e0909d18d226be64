"""The loop IR: EIN statements as loop nests over numbered buffers, below the schedule and
above the C printer."""
