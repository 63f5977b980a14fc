"""The ``hearts`` command line: thin commands over the library (:mod:`.main` is the entry point)."""
