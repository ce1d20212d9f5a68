"""The pygls language server ``watcher-lsp`` (see the language-server issue)."""
