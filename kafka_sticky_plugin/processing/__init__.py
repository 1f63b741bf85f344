"""Long processing that never drops a member out of its group (issue 25).

Client-free floor of the processing helpers: :mod:`.ledger` (pure: per-partition in-order
lanes and the offsets that may be committed) and :mod:`.threaded` (the poll loop for
thread-pool clients over a small :class:`~.threaded.ConsumerPort`). The client drivers live in
``adapters/<client>/processing.py`` and are exported by the client faces.
"""

from .ledger import Ledger, ProcessingError, Task

__all__ = ["Ledger", "ProcessingError", "Task"]
