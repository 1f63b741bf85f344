"""The main job: a rolling-restart demo on a real broker (``python -m kafka_sticky_plugin demo``).

:mod:`.cli` parses arguments and runs :mod:`.scenario` per strategy with a :mod:`.live` view;
:mod:`.report` prints the table and :mod:`.timeline` draws the ownership PNG.
"""
