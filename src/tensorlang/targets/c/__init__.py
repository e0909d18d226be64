"""The C target: printer (codegen), build and cache (build), C-level call path (callext),
kernel (runtime).  Importing it registers :mod:`.forking`'s fork handler."""

from . import forking as _forking  # noqa: F401 - registers os.register_at_fork's handler
