"""Get agent 1 by its identifier."""
import os

import requests

response = requests.get(
    f"{os.environ['AGENTD_URL']}/agents/by-id/1",
    headers={"X-Auth-Token": os.environ["AGENTD_TOKEN"]},
    verify=os.environ.get("AGENTD_CACERT") or True,
    timeout=10,
)
if not response.ok:  # e.g. 404 {"error": "no such agent"}
    raise SystemExit(f"{response.status_code} {response.json()['error']}")
print(response.json())
