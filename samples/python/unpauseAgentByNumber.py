"""End the pause of agent 1001."""
import os

import requests

response = requests.post(
    f"{os.environ['AGENTD_URL']}/agents/by-number/1001/unpause",
    headers={"X-Auth-Token": os.environ["AGENTD_TOKEN"]},
    verify=os.environ.get("AGENTD_CACERT") or True,
    timeout=10,
)
if not response.ok:
    raise SystemExit(f"{response.status_code} {response.json()['error']}")
print(response.status_code)
