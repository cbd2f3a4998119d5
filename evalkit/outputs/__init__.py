"""What evalkit shows: the reference-format printed blocks (`report`), the sweep's text,
markdown and JSON (`sweep_text`), figures (`figures`), notebook support (`notebook`) and the
caveat sentences every output shares (`caveats`)."""
