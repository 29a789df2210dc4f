"""List every agent."""
import os

import requests

response = requests.get(
    f"{os.environ['AGENTD_URL']}/agents",
    headers={"X-Auth-Token": os.environ["AGENTD_TOKEN"]},
    verify=os.environ.get("AGENTD_CACERT") or True,
    timeout=10,
)
if not response.ok:  # e.g. 401 {"error": "invalid token or unauthorized"}
    raise SystemExit(f"{response.status_code} {response.json()['error']}")
for agent in response.json():
    state = ("paused" if agent["paused"] else "available") if agent["logged"] else "logged out"
    print(agent["number"], state)
