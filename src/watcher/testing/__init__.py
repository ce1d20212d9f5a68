"""Public fakes for testing with watcher: stub LLM servers, scripted agents."""
