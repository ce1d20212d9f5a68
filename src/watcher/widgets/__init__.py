"""ipywidgets panels that show a watcher live (see the kernel-extension issue)."""
