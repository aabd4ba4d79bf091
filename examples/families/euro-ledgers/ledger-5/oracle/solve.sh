#!/usr/bin/env bash
set -euo pipefail
mkdir -p /app/output
python3 - <<'PY' > /app/output/total.txt
import csv
from decimal import Decimal
with open("/app/data/ledger.csv", encoding="utf-8", newline="") as fh:
    rows = list(csv.DictReader(fh, delimiter=";"))
total = sum(Decimal(r["bedrag"].replace(".", "").replace(",", ".")) for r in rows)
print(f"{total:.2f}")
PY
