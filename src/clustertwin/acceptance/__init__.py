"""Acceptance: the test plan the twin expects a new cluster to pass, importers for what was
measured (nccl-tests, DCGM diagnostics, burn-in CSV, ibnetdiscover), the health report that
grades every node and link, and recalibration of the training plan from the measurements."""
