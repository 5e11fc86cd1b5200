"""Reports: terminal (rich), JSON (the contract) and a self-contained HTML page."""
