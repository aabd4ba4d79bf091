#!/usr/bin/env bash
# Reward 1 when /app/output/total.txt holds the column total with two decimals.
set -u
mkdir -p /logs/verifier
got="$(tr -d '[:space:]' < /app/output/total.txt 2>/dev/null)"
if [ "$got" = "14863.60" ]; then status=passed; reward=1.0; else status=failed; reward=0.0; fi
p=$([ "$status" = passed ] && echo 1 || echo 0)
printf '%s\n' "$reward" > /logs/verifier/reward.txt
cat > /logs/verifier/ctrf.json <<JSON
{"results": {"tool": {"name": "euro-ledgers"}, "summary": {"tests": 1, "passed": $p, "failed": $((1 - p)), "pending": 0, "skipped": 0, "other": 0}, "tests": [{"name": "test_total", "status": "$status", "duration": 0, "message": "expected the column total with two decimals, got '$got'"}]}}
JSON
exit 0
