"""Reports: one view per stage result (``views/``: terminal rows, figures, HTML fragment), the
terminal summary (rich), the self-contained HTML page and its figures."""
