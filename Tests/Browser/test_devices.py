"""Two devices in the browser (docs/DEVICES.md, "Time travel and audit"; docs/WEB.md): the
time-travel page names each event's device and marks where two acted at once, and the album
says, once, what a merge with the other device changed.

The two stores are made with `vt` itself (clone, actions on each apart, one sync); then
`vt serve` serves the phone's. Run with the other browser tests (scripts/test).
"""
import json
import os
import re
import shutil
import subprocess
import tempfile

from playwright.sync_api import expect

from test_web_app import SHOTS, VT, page  # noqa: F401 (fixtures)

ENV = dict(os.environ, VT_COMMONS_ENDPOINT="http://127.0.0.1:9/w/api.php")
for name in ("FLICKR_API_KEY", "VT_FLICKR_ENDPOINT", "VT_PHOTOS", "VT_STORE"):
    ENV.pop(name, None)


def vt(*arguments):
    run = subprocess.run([str(VT), *arguments], capture_output=True, text=True, env=ENV, timeout=120)
    assert run.returncode == 0, f"vt {' '.join(arguments)}: {run.stderr}"
    return run.stdout


def test_the_pages_mark_each_device_and_the_album_says_once_what_a_merge_changed(page):
    folder = tempfile.mkdtemp(prefix="vt-devices-")
    phone, laptop = folder + "/phone", folder + "/laptop"
    try:
        pin = json.loads(vt("pin", "drop", "48.8584", "2.2945", "--store", phone, "--json"))["pin"]
        album = json.loads(vt("album", "open", pin, "--store", phone, "--photos", "demo", "--per-page", "4", "--json"))["album"]
        assert album["downloaded"] == 4
        vt("device", "--name", "phone", "--store", phone)
        vt("clone", "--from", phone, "--to", laptop, "--name", "laptop")
        # Apart: the laptop removes two photos; the phone, not knowing, drops another pin.
        for photo in album["photos"][:2]:
            vt("photo", "remove", pin, photo["id"], "--store", laptop)
        vt("pin", "drop", "41.8902", "12.4922", "--store", phone)
        vt("sync", "--store", phone, "--with", laptop)

        server = subprocess.Popen(
            [str(VT), "serve", "--store", phone, "--port", "0", "--tiles", "none", "--photos", "demo"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        try:
            match = re.search(r"(http://127\.0\.0\.1:\d+)/", server.stdout.readline())
            assert match, "vt serve printed no address"
            origin = match.group(1)

            page.goto(origin + "/time")
            expect(page.locator("body[data-ready=true]")).to_be_attached()
            expect(page.locator("#devices")).to_contain_text("phone (this device)")
            expect(page.locator("#devices")).to_contain_text("laptop")
            laptop_events = page.locator("#events li[data-device=laptop]")
            expect(laptop_events).to_have_count(3)  # its DeviceSeen and two removals
            expect(laptop_events.first).to_contain_text("DeviceSeen")
            at_once = page.locator("#events li.at-once")
            expect(at_once).to_have_count(1)
            expect(at_once).to_contain_text("PinDropped")
            expect(at_once).to_have_attribute("data-at-once-with", "laptop")
            page.screenshot(path=str(SHOTS / "time-two-devices.png"))

            page.goto(origin + f"/album?pin={pin}")
            expect(page.locator("body[data-ready=true]")).to_be_attached()
            news = page.locator("#news")
            expect(news).to_be_visible()
            expect(news).to_contain_text("laptop removed 2 photos")
            expect(page.locator("#grid .photo")).to_have_count(2)
            page.screenshot(path=str(SHOTS / "album-merge-news.png"))
            page.click("#news button")
            expect(news).to_be_hidden()
            # Said once: opening the album again shows no note, though nothing was done here.
            page.reload()
            expect(page.locator("body[data-ready=true]")).to_be_attached()
            expect(page.locator("#grid .photo")).to_have_count(2)
            expect(news).to_be_hidden()
        finally:
            server.terminate()
            server.communicate(timeout=20)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
