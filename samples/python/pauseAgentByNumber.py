"""Pause agent 1001 with a reason (send no body to pause without one)."""
import os

import requests

response = requests.post(
    f"{os.environ['AGENTD_URL']}/agents/by-number/1001/pause",
    json={"reason": "lunch break"},
    headers={"X-Auth-Token": os.environ["AGENTD_TOKEN"]},
    verify=os.environ.get("AGENTD_CACERT") or True,
    timeout=10,
)
if not response.ok:  # e.g. 409 {"error": "not logged in"}
    raise SystemExit(f"{response.status_code} {response.json()['error']}")
print(response.status_code)
