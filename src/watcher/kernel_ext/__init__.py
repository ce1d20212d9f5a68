"""The IPython extension: ``%load_ext watcher`` and its magics (see the kernel-extension issue)."""
