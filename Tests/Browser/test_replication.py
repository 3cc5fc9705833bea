"""The web app on a replicated store and on its read-only replica, in Chromium: `vt serve
--replicate` and `vt serve --follow` against a real nats-server that scripts/nats-cluster starts.

Run with the other browser tests (scripts/test); the `vt` binary is found as there.
"""
import os
import random
import re
import shutil
import subprocess
import tempfile
import urllib.request

import pytest
from playwright.sync_api import expect

from test_web_app import PER_PAGE, ROOT, SHOTS, VT, api, browser_page, wait_for

CLUSTER = ROOT / "scripts" / "nats-cluster"


class ClusterURL(str):
    """The server's URL, which also knows the folder `scripts/nats-cluster` keeps it in, so that a
    test can kill it and start it again."""
    folder = ""

    def kill(self):
        subprocess.run([str(CLUSTER), "kill", self.folder, "1"], capture_output=True, check=True)

    def restart(self):
        subprocess.run([str(CLUSTER), "restart", self.folder, "1"], capture_output=True, check=True)


@pytest.fixture()
def nats():
    """One nats-server on a loopback port of its own (a few tries, in case one is taken)."""
    folder = tempfile.mkdtemp(prefix="vt-browser-nats-")
    for _ in range(6):
        # Below the kernel's range for outgoing connections' local ports (32768 on), as the Swift
        # tests choose theirs (NATSTestServers.basePorts).
        base = random.randrange(200, 640) * 50
        started = subprocess.run([str(CLUSTER), "start", folder + "/nats", str(base), "--servers", "1"],
                                 capture_output=True, text=True)
        if started.returncode == 0:
            break
        subprocess.run([str(CLUSTER), "stop", folder + "/nats"], capture_output=True)
    assert started.returncode == 0, started.stderr
    url = ClusterURL(started.stdout.strip())
    url.folder = folder + "/nats"
    yield url
    subprocess.run([str(CLUSTER), "stop", folder + "/nats"], capture_output=True)
    shutil.rmtree(folder, ignore_errors=True)


def serve(store, *arguments, **environment):
    """`vt serve` on `store` with the offline photo service, `arguments` and `environment` added."""
    env = dict(os.environ, VT_COMMONS_ENDPOINT="http://127.0.0.1:9/w/api.php", **environment)
    for name in ("FLICKR_API_KEY", "VT_FLICKR_ENDPOINT", "VT_PHOTOS"):
        env.pop(name, None)
    process = subprocess.Popen(
        [str(VT), "serve", "--store", store, "--port", "0", "--tiles", "none", "--per-page", str(PER_PAGE), *arguments],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = process.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
    assert match, f"vt serve printed {line!r}; stderr: {process.stderr.read() if process.poll() is not None else ''}"
    return process, match.group(1)


def test_the_replica_shows_the_originals_albums_live_and_offers_no_changes(nats):
    folder = tempfile.mkdtemp(prefix="vt-browser-replication-")
    original, origin = serve(folder + "/original", "--replicate", nats)
    replica = None
    try:
        with browser_page() as page:
            page.goto(origin + "/")
            expect(page.locator("#map[data-ready=true]")).to_have_count(1)
            badge = page.locator("#replication")
            expect(badge).to_have_text(re.compile(r"^Replicated · "))
            page.mouse.click(400, 300, button="right")
            expect(page.locator(".vt-pin")).to_have_count(1)
            pin = page.locator(".vt-pin").first.get_attribute("data-pin")
            wait_for("the album", lambda: api(origin, f"/api/pins/{pin}")["album"]["status"] == "complete", timeout=60)
            status = wait_for("the cluster to have every event",
                              lambda: (lambda r: r if r["lag_events"] == 0 and r["pending_photos"] == 0 else None)(
                                  api(origin, "/api/replication")), timeout=60)
            expect(badge).to_have_text("Replicated · up to date", timeout=10_000)
            expect(badge).to_have_attribute("data-state", "current")

            replica, replica_origin = serve(folder + "/replica", "--follow", nats, "--stream", status["stream"])
            page.goto(replica_origin + "/")
            expect(page.locator("#map[data-ready=true]")).to_have_count(1)
            expect(page.locator("body.read-only")).to_have_count(1)
            expect(page.locator("#replication")).to_have_text(re.compile(r"^Read-only replica · up to date"))
            expect(page.locator("#hint")).to_contain_text("read-only replica")
            expect(page.locator(".vt-pin")).to_have_count(1)
            # Holding the right button where the original would drop a pin drops nothing here.
            page.mouse.click(600, 400, button="right")
            page.wait_for_timeout(800)
            expect(page.locator(".vt-pin")).to_have_count(1)
            assert len(api(replica_origin, "/api/state")["pins"]) == 1

            # The album shows the original's photos (from the bucket), and no buttons that change.
            page.goto(f"{replica_origin}/album?pin={pin}")
            expect(page.locator(".photo.downloaded img")).to_have_count(PER_PAGE)
            for button in ("#forget", "#new-collection", "#retry"):
                expect(page.locator(button)).to_be_hidden()
            page.locator(".photo.downloaded").first.click()
            page.wait_for_timeout(800)
            expect(page.locator(".photo.downloaded img")).to_have_count(PER_PAGE)
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / "replica-album.png"))

            # A pin dropped on the original appears on the replica's open map, live.
            page.goto(replica_origin + "/")
            expect(page.locator(".vt-pin")).to_have_count(1)
            request = urllib.request.Request(origin + "/api/pins", data=b'{"latitude": -33.86, "longitude": 151.21}',
                                             method="POST", headers={"Content-Type": "application/json"})
            urllib.request.urlopen(request, timeout=10).read()
            expect(page.locator(".vt-pin")).to_have_count(2, timeout=30_000)
            page.screenshot(path=str(SHOTS / "replica-map.png"))

            # While the original rewrites the stream (a place forgotten after it was shipped),
            # the badge says so as a wait, not an error: the server's own answer, with the flag
            # a rewrite sets (ReplicationTests make a real one; here only the page is under test).
            def rewriting(route):
                answer = route.fetch()
                route.fulfill(response=answer, json=dict(answer.json(), rewriting=True))
            page.route("**/api/replication", rewriting)
            badge = page.locator("#replication")
            expect(badge).to_have_text(re.compile(r"^Read-only replica · rewriting the stream, "), timeout=10_000)
            expect(badge).to_have_attribute("data-state", "behind")
            expect(badge).to_have_attribute("title", re.compile("being rewritten"))
            page.unroute("**/api/replication")
            expect(badge).to_have_text(re.compile(r"^Read-only replica · (up to date|\d+ events? behind)"), timeout=10_000)
    finally:
        for process in (replica, original):
            if process and process.poll() is None:
                process.terminate()
                _, errors = process.communicate(timeout=30)
                assert process.returncode == 0, f"vt serve did not stop cleanly on SIGTERM ({process.returncode}); stderr:\n{errors[-4000:]}"
        shutil.rmtree(folder, ignore_errors=True)
