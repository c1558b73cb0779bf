"""OAuth with the official Python `mcp` SDK's `OAuthClientProvider` against a real daemon.

The daemon (`fake_executor --public-url http://127.0.0.1:PORT`, the production OAuth
server with an in-process simulated executor) is discovered, registered with, authorized
and refreshed by the SDK itself; the test plays the browser (fetching the consent page)
and the operator (`orchestrator oauth approve CODE`). Then the worker workflow of
test_mcp.py runs over the OAuth session. Negative cases use raw HTTP.

Run by run.sh (ORCHESTRATOR_BIN, FAKE_EXECUTOR_BIN). Prints `N passed, N failed`.
"""

import asyncio
import base64
import hashlib
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from test_mcp import ok, run_tests, synthetic_workflow

ORCHESTRATOR = os.environ["ORCHESTRATOR_BIN"]
FAKE_EXECUTOR = os.environ["FAKE_EXECUTOR_BIN"]
TOKEN = "python-oauth-token-0123456789"
REDIRECT = "http://127.0.0.1:1/callback"
# The daemon's access-token lifetime here, so that a refresh happens within the test.
ACCESS_TTL_S = 6


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OAuthDaemon:
    """fake_executor with OAuth on at http://127.0.0.1:PORT."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="orchestrator-py-oauth-")
        self.data = os.path.join(self.dir, "data")
        port = free_port()
        self.public = f"http://127.0.0.1:{port}"
        self.log = open(os.path.join(self.dir, "stderr.log"), "w")
        self.proc = subprocess.Popen(
            [FAKE_EXECUTOR, "--data-dir", self.data, "--listen", f"127.0.0.1:{port}", "--mcp-token", TOKEN,
             "--turn-ms", "400", "--public-url", self.public, "--log-level", "debug",
             "--oauth-access-ttl-ms", str(ACCESS_TTL_S * 1000)],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        deadline = time.time() + 30
        self.url = None
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            if line.startswith("orchestrator: MCP endpoint "):
                self.url = line.split()[-1]
                break
        if self.url is None:
            self.proc.kill()
            raise RuntimeError("daemon did not start: " + open(self.log.name).read())

    def cli(self, *args):
        env = {**os.environ, "ORCHESTRATOR_MCP_TOKEN": TOKEN}
        env.pop("ORCHESTRATOR_DATA_DIR", None)
        return subprocess.run([ORCHESTRATOR, "oauth", *args, "--data-dir", self.data],
                              capture_output=True, text=True, env=env, timeout=30)

    def stop(self):
        self.proc.terminate()
        code = self.proc.wait(timeout=20)
        self.log.close()
        return code

    def logs(self):
        return open(self.log.name).read()


class Storage:
    """In-memory TokenStorage."""

    def __init__(self, tokens=None, client=None):
        self.tokens, self.client = tokens, client

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


class Operator:
    """Plays the browser and the operator: consent page, `oauth approve`, the redirect."""

    def __init__(self, daemon):
        self.daemon, self.result, self.redirects = daemon, None, 0

    async def redirect_handler(self, url):
        self.redirects += 1
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            page = await http.get(url)
            assert page.status_code == 200, (page.status_code, page.text)
            assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
            human = re.search(r'id="human-code">([A-Z0-9-]+)<', page.text).group(1)
            poll = re.search(r'url=([^"]+)"', page.text).group(1).replace("&amp;", "&")
            done = self.daemon.cli("approve", human)
            assert done.returncode == 0, done.stdout + done.stderr
            answer = await http.get(poll)
            assert answer.status_code == 303, (answer.status_code, answer.text)
            q = parse_qs(urlsplit(answer.headers["location"]).query)
            self.result = AuthorizationCodeResult(code=q["code"][0], state=q["state"][0], iss=q["iss"][0])

    async def callback_handler(self):
        return self.result


def metadata():
    return OAuthClientMetadata(redirect_uris=[REDIRECT], grant_types=["authorization_code", "refresh_token"],
                               response_types=["code"], token_endpoint_auth_method="none",
                               client_name="python-sdk-oauth-test")


async def run_session(url, provider, body):
    async with httpx2.AsyncClient(auth=provider, timeout=60) as client, \
            streamable_http_client(url, http_client=client) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)


async def test_sdk_oauth_flow_workflow_and_refresh():
    d = OAuthDaemon()
    try:
        storage, operator = Storage(), Operator(d)
        provider = OAuthClientProvider(d.url, metadata(), storage, operator.redirect_handler, operator.callback_handler)
        await run_session(d.url, provider, synthetic_workflow)
        assert operator.redirects == 1, "one authorization"
        first = storage.tokens
        assert first and first.access_token.startswith("oat_") and first.refresh_token

        # Refresh: past the access token's lifetime (expires_in, which the SDK tracks) the
        # SDK refreshes before its next request; no new authorization.
        assert first.expires_in == ACCESS_TTL_S, first
        await asyncio.sleep(max(0.0, provider.context.token_expiry_time - time.time()) + 0.3)

        async def tools(session):
            run = await ok(session, "run_create", {"taskName": "After refresh", "rootConversationName": "Root"})
            await ok(session, "worker_progress", {"workerId": run["rootWorkerId"], "summary": "refreshed"})
        await run_session(d.url, provider, tools)
        assert operator.redirects == 1, "refreshed, not re-authorized"
        second = storage.tokens
        assert second.refresh_token != first.refresh_token, "the refresh token rotated"
        # A replayed code is refused (the SDK already used it) and revokes the grant it
        # produced, refreshed tokens included (OAuth 2.1 section 4.1.3).
        async with httpx2.AsyncClient() as http:
            r = await http.post(f"{d.public}/oauth/token", data={
                "grant_type": "authorization_code", "code": operator.result.code,
                "client_id": storage.client.client_id, "redirect_uri": REDIRECT,
                "code_verifier": "x" * 43, "resource": d.url})
            assert r.status_code == 400 and r.json()["error"] == "invalid_grant", r.text
        # The old refresh token again: refused, and the whole family with it.
        async with httpx2.AsyncClient() as http:
            form = {"grant_type": "refresh_token", "client_id": storage.client.client_id}
            r = await http.post(f"{d.public}/oauth/token", data={**form, "refresh_token": first.refresh_token})
            assert r.json()["error"] == "invalid_grant", r.text
            r = await http.post(f"{d.public}/oauth/token", data={**form, "refresh_token": second.refresh_token})
            assert r.json()["error"] == "invalid_grant", "the family is revoked: " + r.text

        logs = d.logs()
        for secret in (first.access_token, first.refresh_token, second.access_token,
                       second.refresh_token, operator.result.code):
            assert secret not in logs, "a secret in the daemon's log"
    finally:
        assert d.stop() == 0


async def test_refusals_altered_redirect_plain_pkce_wrong_resource():
    d = OAuthDaemon()
    try:
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            r = await http.post(f"{d.public}/oauth/register", json={"redirect_uris": ["https://evil.example/cb"]})
            assert r.status_code == 400 and r.json()["error"] == "invalid_redirect_uri", r.text
            r = await http.post(f"{d.public}/oauth/register", json={"redirect_uris": [REDIRECT]})
            client = r.json()["client_id"]
            verifier = "v" * 50
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            base = {"response_type": "code", "client_id": client, "redirect_uri": REDIRECT, "state": "s1",
                    "code_challenge": challenge, "code_challenge_method": "S256", "resource": d.url}

            async def authorize(**changes):
                return await http.get(f"{d.public}/oauth/authorize?" + urlencode({**base, **changes}))

            altered = await authorize(redirect_uri="http://127.0.0.1:1/callback/other")
            assert altered.status_code == 400 and "location" not in altered.headers, altered.status_code
            for changes, error in (({"code_challenge_method": "plain"}, "invalid_request"),
                                   ({"resource": "https://elsewhere.example/mcp"}, "invalid_target")):
                r = await authorize(**changes)
                assert r.status_code == 303, r.status_code
                q = parse_qs(urlsplit(r.headers["location"]).query)
                assert q["error"] == [error] and q["iss"] == [d.public] and q["state"] == ["s1"], q
            r = await http.post(d.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                headers={"Authorization": "Bearer oat_garbage"})
            assert r.status_code == 401 and 'error="invalid_token"' in r.headers["www-authenticate"], r.headers
    finally:
        assert d.stop() == 0


if __name__ == "__main__":
    sys.exit(asyncio.run(run_tests(globals())))
