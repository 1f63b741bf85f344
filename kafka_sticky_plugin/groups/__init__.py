"""Run consumer groups of real clients and read what happened: members in threads or
processes, their event log, a keyed producer, ownership analysis (used by the demo and the
``conformance`` command)."""
