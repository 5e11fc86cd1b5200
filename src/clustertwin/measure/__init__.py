"""``clustertwin measure``: a short standard training benchmark on this machine's GPU, compared
with the twin's prediction (consumer layer, beside acceptance/check)."""
