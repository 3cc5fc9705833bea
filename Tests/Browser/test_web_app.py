"""The web app in a real browser: Playwright driving Debian's Chromium against `vt serve`.

Run by scripts/test after the Swift tests (it needs .build/debug/vt, or the binary VT_BINARY
names). Screenshots of each page are saved in .build/screenshots/.
"""
import contextlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request

import pytest
from playwright.sync_api import expect, sync_playwright

ROOT = pathlib.Path(__file__).resolve().parents[2]
VT = pathlib.Path(os.environ.get("VT_BINARY") or ROOT / ".build" / "debug" / "vt")
# VT_SCREENSHOTS=docs/screenshots refreshes the pictures README.md shows.
SHOTS = pathlib.Path(os.environ.get("VT_SCREENSHOTS") or ROOT / ".build" / "screenshots")
CHROMIUM = os.environ.get("VT_CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
PER_PAGE = 9


@pytest.fixture()
def server():
    store = tempfile.mkdtemp(prefix="vt-browser-")
    # No key, and a Commons endpoint where nothing listens: `auto` falls back to the offline
    # demo service at once, as on a machine without a network, whatever this one has.
    env = dict(os.environ, VT_DEMO_IMAGE_DELAY_MS="700", VT_COMMONS_ENDPOINT="http://127.0.0.1:9/w/api.php")
    for name in ("FLICKR_API_KEY", "VT_FLICKR_ENDPOINT", "VT_PHOTOS"):
        env.pop(name, None)
    process = subprocess.Popen(
        [str(VT), "serve", "--store", store + "/store", "--port", "0", "--tiles", "none", "--per-page", str(PER_PAGE)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = process.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
    assert match, f"vt serve printed {line!r}; stderr: {process.stderr.read() if process.poll() is not None else ''}"
    yield match.group(1)
    process.terminate()
    _, errors = process.communicate(timeout=20)
    assert process.returncode == 0, f"vt serve did not stop cleanly on SIGTERM ({process.returncode}); stderr:\n{errors[-4000:]}"
    shutil.rmtree(store, ignore_errors=True)


@contextlib.contextmanager
def browser_page(**options):
    """A page in Chromium (1000 × 720 unless `options` say otherwise); fails the test if a
    page threw."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(**{"viewport": {"width": 1000, "height": 720}, **options})
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        yield page
        browser.close()
        assert errors == [], f"the pages threw: {errors}"


@pytest.fixture()
def page():
    with browser_page(has_touch=False) as page:
        yield page


def api(origin, path):
    with urllib.request.urlopen(origin + path, timeout=10) as answer:
        return json.loads(answer.read())


def wait_for(what, check, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def pin_tip_near(locator, x, y, what, timeout=5):
    """The marker's box once its tip (11 px right of its left edge, 26 px below its top) is within
    3 × 4 px of (x, y). Polled: the page moves the marker when it handles the last pointer or touch
    event, which can come just after the call that sent it returns (a CI run caught it one step behind)."""
    deadline = time.monotonic() + timeout
    while True:
        box = locator.bounding_box()
        if box and abs(box["x"] + 11 - x) <= 3 and abs(box["y"] + 26 - y) <= 4:
            return box
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: {box}, not at {x}, {y}")
        time.sleep(0.05)


def events(origin, kind):
    return api(origin, f"/api/events?type={kind}&limit=1000")["events"]


def test_map_album_and_time_travel(server, page):
    origin = server
    page.goto(origin + "/")
    expect(page.locator("#map[data-ready=true]")).to_be_visible()
    assert events(origin, "RegionChanged") == [], "opening the map appends nothing"

    # Zoom in twice: once the map settles, the region is saved.
    page.click(".leaflet-control-zoom-in")
    page.wait_for_timeout(400)
    page.click(".leaflet-control-zoom-in")
    page.wait_for_timeout(1500)  # the map settles (600 ms) and the region is saved
    region = api(origin, "/api/state")["region"]
    assert region is not None and region["latitude_span"] < 60, region
    view = page.locator("#map").get_attribute("data-view")

    # Touch-and-hold drops a pin where pressed; it follows the pointer until release.
    page.mouse.move(400, 330)
    page.mouse.down()
    page.wait_for_timeout(700)
    expect(page.locator(".pin.pending")).to_have_count(1)
    page.mouse.move(470, 380, steps=8)
    pin_tip_near(page.locator(".leaflet-marker-icon:has(.pin.pending)"), 470, 380, "the pin follows the pointer")
    page.mouse.up()
    pin_element = page.locator(".vt-pin")
    expect(pin_element).to_have_count(1)
    pins = wait_for("the pin", lambda: api(origin, "/api/state")["pins"])
    pin = pins[0]["id"]
    box = pin_element.bounding_box()
    assert abs(box["x"] + 11 - 470) <= 3 and abs(box["y"] + 26 - 380) <= 4, f"the pin lands where released: {box}"
    assert len(events(origin, "PinDropped")) == 1
    # Pre-fetch: the album is requested without opening it.
    wait_for("pre-fetch", lambda: events(origin, "AlbumRequested"))

    # Drag the pin elsewhere.
    page.mouse.move(box["x"] + 11, box["y"] + 12)
    page.mouse.down()
    page.mouse.move(box["x"] + 91, box["y"] + 52, steps=10)
    page.mouse.up()
    dragged = wait_for("PinDragged", lambda: events(origin, "PinDragged"))
    assert dragged[0]["pin"] == pin
    page.screenshot(path=str(SHOTS / "map.png"))

    # Open the album: placeholders first, New Collection disabled; then images, enabled.
    page.locator(".vt-pin").click()
    page.wait_for_url(re.compile(r"/album\?pin=" + pin))
    expect(page.locator("body[data-ready=true]")).to_have_count(1)
    expect(page.locator(".photo.placeholder").first).to_be_visible()
    expect(page.locator("#new-collection")).to_be_disabled()
    page.screenshot(path=str(SHOTS / "album-downloading.png"))
    photos = page.locator(".photo img")
    expect(photos).to_have_count(PER_PAGE, timeout=30000)
    expect(page.locator(".photo.placeholder")).to_have_count(0)
    expect(page.locator("#new-collection")).to_be_enabled()
    page.screenshot(path=str(SHOTS / "album.png"))

    # New Collection: disabled while the new set downloads, enabled once it has.
    first_collection = api(origin, f"/api/pins/{pin}")["album"]["collection"]
    page.click("#new-collection")
    expect(page.locator("#new-collection")).to_be_disabled()
    expect(page.locator(".photo.placeholder").first).to_be_visible()
    expect(page.locator("#new-collection")).to_be_enabled(timeout=30000)
    expect(page.locator(".photo img")).to_have_count(PER_PAGE)
    assert api(origin, f"/api/pins/{pin}")["album"]["collection"] == first_collection + 1

    # Every photo is credited under it, with a link to its own page; a tap on the credit line
    # removes nothing.
    credits = page.locator("#grid .card .credit")
    expect(credits).to_have_count(PER_PAGE)
    expect(credits.first).to_contain_text("Offline demo service (generated image)")
    link = credits.first.locator("a.page-link")
    expect(link).to_be_visible()
    expect(credits.first.locator(".terms")).to_contain_text("Generated image, no rights reserved")
    href = link.get_attribute("href")
    assert re.match(r"^http://127\.0\.0\.1:\d+/photos/[^/]+/\d+$", href), href
    assert link.get_attribute("target") == "_blank"
    with urllib.request.urlopen(href, timeout=10) as answer:
        assert "generated image" in answer.read().decode()
    credits.first.click(position={"x": 3, "y": 3})
    page.wait_for_timeout(300)
    expect(page.locator(".photo")).to_have_count(PER_PAGE)
    assert events(origin, "PhotoRemoved") == []
    page.screenshot(path=str(SHOTS / "album-credits.png"))

    # Tapping a photo removes it; the rest flow up.
    slots = page.locator(".photo").evaluate_all("tiles => tiles.map(t => t.dataset.slot)")
    page.locator(".photo img").first.click()
    expect(page.locator(".photo")).to_have_count(PER_PAGE - 1)
    after = page.locator(".photo").evaluate_all("tiles => tiles.map(t => t.dataset.slot)")
    assert after == slots[1:], f"{after} should be {slots[1:]}"
    removed = events(origin, "PhotoRemoved")
    assert [event["slot"] for event in removed] == [int(slots[0])]

    # Back: the map at the same region, with the pin.
    page.click("#back")
    expect(page.locator("#map[data-ready=true]")).to_have_count(1)
    assert page.locator("#map").get_attribute("data-view") == view
    expect(page.locator(".vt-pin")).to_have_count(1)
    expect(page.locator(".vt-pin[data-status=complete]")).to_have_count(1)

    # Reload: the same region and pins, and nothing appended by opening the page.
    count = api(origin, "/api/state")["last_seq"]
    page.reload()
    expect(page.locator("#map[data-ready=true]")).to_have_count(1)
    assert page.locator("#map").get_attribute("data-view") == view
    expect(page.locator(".vt-pin")).to_have_count(1)
    assert api(origin, "/api/state")["region"] == region
    assert api(origin, "/api/state")["last_seq"] == count

    # Time travel: the slider's start shows no pins, its end the pin; a pin's album as it was.
    page.goto(origin + "/time")
    expect(page.locator("body[data-ready=true]")).to_have_count(1)
    assert page.locator("#map").get_attribute("data-pins") == "1"
    page.locator("#slider").fill("0")
    expect(page.locator("#map[data-seq='0']")).to_have_count(1)
    assert page.locator("#map").get_attribute("data-pins") == "0"
    dropped_at = events(origin, "PinDropped")[0]["seq"]
    page.locator("#slider").fill(str(dropped_at))
    expect(page.locator(f"#map[data-seq='{dropped_at}']")).to_have_count(1)
    assert page.locator("#map").get_attribute("data-pins") == "1"
    page.locator(f"#events li[data-seq='{dropped_at}']").click()
    expect(page.locator("#events li.current")).to_have_text(re.compile(r"PinDropped"))
    page.locator("#diff-go").click()
    expect(page.locator("#diff")).to_contain_text("+ pin")
    page.screenshot(path=str(SHOTS / "time-travel.png"))


def test_right_click_drops_a_pin_and_changes_from_elsewhere_appear_live(server, page):
    origin = server
    page.goto(origin + "/")
    expect(page.locator("#map[data-ready=true]")).to_have_count(1)
    page.mouse.move(300, 300)
    page.mouse.down(button="right")
    page.mouse.move(320, 310, steps=3)
    page.mouse.up(button="right")
    expect(page.locator(".vt-pin")).to_have_count(1)
    # Another client (here: a plain HTTP request) drops a pin; the open page shows it.
    request = urllib.request.Request(
        origin + "/api/pins", data=b'{"latitude": 10, "longitude": 10}', method="POST",
        headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()
    expect(page.locator(".vt-pin")).to_have_count(2)
    # A page of another origin cannot change anything.
    status = page.evaluate("""async (origin) => {
        const response = await fetch(origin + '/api/pins', {method: 'POST', headers: {'Content-Type': 'text/plain'}, body: '{}'});
        return response.status;
    }""", origin)
    assert status == 415


def test_touch_and_hold_drops_a_pin_that_follows_the_finger(server):
    origin = server
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 800, "height": 600}, has_touch=True, is_mobile=True)
        page = context.new_page()
        page.goto(origin + "/")
        expect(page.locator("#map[data-ready=true]")).to_have_count(1)
        touch = context.new_cdp_session(page)

        def finger(kind, x, y):
            points = [] if kind == "touchEnd" else [{"x": x, "y": y}]
            touch.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

        # A short touch that moves is a pan, not a pin.
        finger("touchStart", 300, 300)
        finger("touchMove", 340, 300)
        finger("touchEnd", 340, 300)
        page.wait_for_timeout(800)
        expect(page.locator(".vt-pin")).to_have_count(0)

        # Touch and hold: a provisional pin appears, follows the finger, drops where lifted.
        finger("touchStart", 300, 300)
        page.wait_for_timeout(700)
        expect(page.locator(".pin.pending")).to_have_count(1)
        for step in range(1, 6):
            finger("touchMove", 300 + step * 10, 300 + step * 6)
        pin_tip_near(page.locator(".leaflet-marker-icon:has(.pin.pending)"), 350, 330, "the pin follows the finger")
        finger("touchEnd", 350, 330)
        expect(page.locator(".vt-pin")).to_have_count(1)
        box = page.locator(".vt-pin").bounding_box()
        assert abs(box["x"] + 11 - 350) <= 3 and abs(box["y"] + 26 - 330) <= 4, box
        assert len(api(origin, "/api/state")["pins"]) == 1
        page.screenshot(path=str(SHOTS / "map-touch.png"))
        browser.close()
