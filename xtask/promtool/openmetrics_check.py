"""Reads an OpenMetrics exposition from stdin with the Prometheus Python client's parser.

Run by `cargo xtask promtool` on a scrape of `GET /metrics` in OpenMetrics (promtool
lints the Prometheus text format only). The parser follows the OpenMetrics standard and
raises on anything it does not allow: a missing `# EOF`, a counter sample without
`_total`, a family declared twice, a malformed label. Success prints the families read.
"""

import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families

text = sys.stdin.read()
try:
    families = list(text_string_to_metric_families(text))
except ValueError as error:
    print(f"invalid OpenMetrics: {error}", file=sys.stderr)
    sys.exit(1)
samples = sum(len(family.samples) for family in families)
print(f"OpenMetrics: {len(families)} families, {samples} samples")
