"""The hardware, model, price and failure catalog: YAML data loaded through typed models."""

from clustertwin.catalog.loader import Catalog, load_catalog
from clustertwin.catalog.models import KINDS

__all__ = ["Catalog", "load_catalog", "KINDS"]
