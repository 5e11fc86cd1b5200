"""Which tool wrote a file, from its content: the option it was given (``--nccl``...) and its
name are hints only. A result given under the wrong option, or named ``results.txt``, is still
read by the right importer.

Signatures (first 64 kB):

* nccl-tests text: the ``# nThread .. nGpus ..`` banner or the table header with ``size`` and
  ``busbw``; nccl-tests ``-J`` JSON: a ``results`` list.
* DCGM diagnostics JSON: the key ``DCGM GPU Diagnostic`` (DCGM <= 3.x) or ``DCGM Diagnostic``
  (4.x), after any line dcgmi prints first.
* ibnetdiscover: ``Switch``/``Ca`` records (``Switch 64 "S-..."``) after the ``vendid=`` /
  ``sysimgguid=`` lines.
* burn-in CSV: a header naming ``node``, ``gpu`` and ``tflops``.
"""

from __future__ import annotations

import json
import re

HEAD = 65536
_IBNET = re.compile(r'^(Switch|Ca)\s+\d+\s+"[SH]-[0-9a-fA-F]+"', re.M)
_NCCL = re.compile(r"^\s*(\[\d+,\d+\]<std(out|err)>:\s*)?#\s*(nThread\s+\d+|\s*size\s+count\s.*busbw)",
                   re.M)
_DCGM_KEYS = ("DCGM GPU Diagnostic", "DCGM Diagnostic")


def sniff(text: str) -> str | None:
    """``nccl`` | ``dcgm`` | ``ibnet`` | ``burnin`` | None (not recognised)."""
    head = text[:HEAD]
    if any(f'"{k}"' in head for k in _DCGM_KEYS):   # dcgmi may print a line before its JSON
        return "dcgm"
    if head.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except ValueError:
            return None
        return "nccl" if isinstance(doc, dict) and isinstance(doc.get("results"), list) else None
    if _IBNET.search(head) and ("sysimgguid=" in head or "switchguid=" in head
                                or "caguid=" in head):
        return "ibnet"
    if _NCCL.search(head):
        return "nccl"
    first = next((ln for ln in head.splitlines() if ln.strip() and not ln.startswith("#")), "")
    cols = {c.strip().lower() for c in first.split(",")}
    if {"node", "gpu", "tflops"} <= cols:
        return "burnin"
    return None
