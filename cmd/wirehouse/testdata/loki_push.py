"""Pushes log lines to a Loki push URL with two Python handlers from PyPI:
python-logging-loki (JSON, in its current shape with version="1" and in
the older one it sends by default) and loki-logger-handler (gzipped JSON
with structured metadata). Usage: loki_push.py URL N JOB. Each handler sends
N lines "<handler> line <i>" (loki-logger-handler as the "message" of
a JSON line, its default) labelled job=JOB and handler=<handler>; the
handlers send as they log (python-logging-loki) or from a queue sent at
exit (loki-logger-handler).
"""
import logging
import sys
import warnings

import logging_loki
from loki_logger_handler.loki_logger_handler import LokiLoggerHandler

url, n, job = sys.argv[1], int(sys.argv[2]), sys.argv[3]
warnings.simplefilter("ignore", DeprecationWarning)

for name, version in (("pll-v1", "1"), ("pll-v0", "0")):
    h = logging_loki.LokiHandler(url=url, tags={"job": job, "handler": name}, version=version)
    lg = logging.getLogger(name)
    lg.propagate = False
    lg.addHandler(h)
    lg.setLevel(logging.INFO)
    for i in range(n):
        lg.info(f"{name} line {i}")

h = LokiLoggerHandler(url=url, labels={"job": job, "handler": "llh"}, enable_structured_loki_metadata=True,
                      loki_metadata={"tenant_tag": "blue"}, timeout=10)
lg = logging.getLogger("llh")
lg.propagate = False
lg.addHandler(h)
lg.setLevel(logging.INFO)
for i in range(n):
    lg.warning(f"llh line {i}")
print("pushed")  # loki-logger-handler sends its queue at exit
