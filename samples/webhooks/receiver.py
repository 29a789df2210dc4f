"""Receives agentd's webhooks (agentPaused, agentUnpaused) with the standard
library only: checks each delivery's Standard Webhooks signature and
timestamp, refuses a bad one with 401, and handles each event once,
whatever the retries."""
import base64
import hashlib
import hmac
import json
import os
import socket
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

# The base64 of the secret may come without its "=" padding, as agentd takes it.
SECRET = base64.b64decode(os.environ["AGENTD_WEBHOOK_SECRET"].removeprefix("whsec_") + "==")
TOLERANCE = 5 * 60  # seconds a timestamp may be off
handled = set()  # webhook-ids already handled: keep them in your store


def verified(webhook_id, timestamp, body, signatures):
    if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > TOLERANCE:
        return False
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(SECRET, signed, hashlib.sha256).digest()).decode()
    # The header lists one or more "v1,<signature>", separated by spaces.
    return any(
        # As bytes: compare_digest refuses str holding a non-ASCII character (a TypeError, no answer).
        version == "v1" and hmac.compare_digest(signature.encode(), expected.encode())
        for version, _, signature in (entry.partition(",") for entry in signatures.split())
    )


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        webhook_id = self.headers.get("webhook-id", "")
        if not verified(webhook_id, self.headers.get("webhook-timestamp", ""), body, self.headers.get("webhook-signature", "")):
            self.send_response(401)
            self.end_headers()
            return
        if webhook_id in handled:
            print(f"repeat {webhook_id}", flush=True)
        else:
            handled.add(webhook_id)
            event = json.loads(body)
            print(f"{event['name']} {event['data']['agent_number']} {json.dumps(event['data']['paused_reason'])} {webhook_id}", flush=True)
        self.send_response(204)  # any 2xx: delivered, not sent again
        self.end_headers()

    def log_message(self, *args):
        pass  # one line per event is printed above


class Server(HTTPServer):
    # Every interface, IPv6 as well as IPv4, where the machine has both.
    address_family = socket.AF_INET6 if socket.has_dualstack_ipv6() else socket.AF_INET

    def server_bind(self):
        if self.address_family == socket.AF_INET6:
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


port = int(os.environ.get("PORT", "8080"))
print(f"listening on {port}", flush=True)
Server(("", port), Receiver).serve_forever()
