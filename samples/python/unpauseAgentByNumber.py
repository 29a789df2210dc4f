"""End the pause of agent 1003."""
import os

import requests

response = requests.post(
    f"{os.environ['AGENTD_URL']}/agents/by-number/1003/unpause",
    headers={"X-Auth-Token": os.environ["AGENTD_TOKEN"]},
    verify=os.environ.get("AGENTD_CACERT") or True,
    timeout=10,
)
if not response.ok:
    raise SystemExit(f"{response.status_code} {response.json()['error']}")
print(response.status_code)
