"""Importers of measured acceptance results. Each returns its parsed figures and an
:class:`~clustertwin.acceptance.importers.common.ImportReport` (rows read / rejected, with
reasons); a file that cannot be read at all raises UsageError, one Problem per defect."""
