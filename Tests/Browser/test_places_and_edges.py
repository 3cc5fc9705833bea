"""The app as a person meets it, in Chromium: place names, land on the offline map, and the
rough edges of issue 23 (each test here fails without its fix).

Run with the other browser tests (scripts/test); the `vt` binary is found as there.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.request

import pytest
from playwright.sync_api import expect

from test_web_app import PER_PAGE, SHOTS, VT, api, browser_page, events, wait_for

ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")


class Server:
    """`vt serve` on a store of its own, offline (no key, no Commons: the demo service), which a
    test can stop and start again on the same port and store."""

    def __init__(self, image_delay_ms=0):
        self.folder = tempfile.mkdtemp(prefix="vt-places-")
        self.store = self.folder + "/store"
        self.env = dict(os.environ, VT_DEMO_IMAGE_DELAY_MS=str(image_delay_ms), VT_COMMONS_ENDPOINT="http://127.0.0.1:9/w/api.php")
        for name in ("FLICKR_API_KEY", "VT_FLICKR_ENDPOINT", "VT_PHOTOS"):
            self.env.pop(name, None)
        self.port = 0
        self.process = None
        self.origin = None

    def start(self):
        self.process = subprocess.Popen(
            [str(VT), "serve", "--store", self.store, "--port", str(self.port), "--tiles", "none", "--per-page", str(PER_PAGE)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env)
        line = self.process.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:(\d+))/", line)
        assert match, f"vt serve printed {line!r}"
        self.origin, self.port = match.group(1), int(match.group(2))
        return self.origin

    def stop(self):
        self.process.terminate()
        _, errors = self.process.communicate(timeout=20)
        assert self.process.returncode == 0, f"vt serve did not stop cleanly on SIGTERM ({self.process.returncode}); stderr:\n{errors[-4000:]}"

    def vt(self, *arguments):
        """Runs a `vt` command on the store (while the server is stopped: one writer)."""
        return subprocess.run([str(VT), *arguments, "--store", self.store], env=self.env, capture_output=True, text=True, check=True)

    def post(self, path, body):
        request = urllib.request.Request(self.origin + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())


@pytest.fixture()
def served():
    server = Server()
    server.start()
    yield server
    if server.process.poll() is None:
        server.stop()
    shutil.rmtree(server.folder, ignore_errors=True)


@pytest.fixture(name="browser_page")
def local_page():
    # A reader in Madrid, so that local times differ from the log's UTC.
    with browser_page(locale="en-GB", timezone_id="Europe/Madrid") as page:
        yield page


def settled(server, pin):
    return wait_for(f"pin {pin}'s album to settle",
                    lambda: api(server.origin, f"/api/pins/{pin}")["album"]["new_collection_enabled"], timeout=30)


def test_the_offline_map_shows_land_and_pins_are_named(served, browser_page):
    page = browser_page
    lanzarote = served.post("/api/pins", {"latitude": 28.963, "longitude": -13.548})
    ocean = served.post("/api/pins", {"latitude": -30.0, "longitude": -120.0})
    assert lanzarote["place"]["text"] == "near Arrecife, Spain"
    assert ocean["place"]["text"] == "in the South Pacific Ocean"

    page.goto(served.origin + "/")
    expect(page.locator("#map[data-ready=true]")).to_have_count(1)
    # Land: Natural Earth's countries, drawn beneath the graticule (no tiles are configured).
    wait_for("the land", lambda: (page.locator("#map").get_attribute("data-land") or "").isdigit())
    assert int(page.locator("#map").get_attribute("data-land")) > 150
    panes = page.evaluate("""() => ({
        land: Number(getComputedStyle(document.querySelector('.leaflet-land-pane')).zIndex),
        graticule: Number(getComputedStyle(document.querySelector('.leaflet-graticule-pane')).zIndex),
        shapes: document.querySelectorAll('.leaflet-land-pane path').length })""")
    assert panes["land"] < panes["graticule"] and panes["shapes"] > 150, panes
    expect(page.locator(".leaflet-control-attribution")).to_contain_text("Natural Earth")

    # Each pin's tooltip names its place.
    marker = page.locator(f".vt-pin[data-pin='{lanzarote['id']}']")
    expect(marker).to_have_attribute("data-place", "near Arrecife, Spain")
    page.locator(f".vt-pin[data-pin='{ocean['id']}']").hover()
    expect(page.locator(".leaflet-tooltip")).to_have_text("in the South Pacific Ocean")
    page.screenshot(path=str(SHOTS / "map-offline.png"))

    # The album is titled with the place's name.
    page.goto(served.origin + f"/album?pin={lanzarote['id']}")
    expect(page.locator("#title")).to_have_text("Photos near Arrecife, Spain")
    assert "Arrecife" in page.title()

    # The land file is small, sent compressed, and cached (revalidated by its ETag).
    request = urllib.request.Request(served.origin + "/land.json", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        body = answer.read()
        assert answer.headers["Content-Encoding"] == "gzip"
        assert "max-age" in answer.headers["Cache-Control"]
        tag = answer.headers["ETag"]
    assert 10_000 < len(body) < 120_000, len(body)
    request = urllib.request.Request(served.origin + "/land.json", headers={"If-None-Match": tag})
    with pytest.raises(urllib.error.HTTPError) as not_modified:
        urllib.request.urlopen(request, timeout=10)
    assert not_modified.value.code == 304


def test_no_images_is_said_once_the_small_map_shows_the_state_and_no_others_are_offered(served, browser_page):
    page = browser_page
    # Pins along a line until one lands where the (deterministic) demo service has no photos,
    # and one where it has no more than an album holds.
    empty = few = None
    for step in range(80):
        pin = served.post("/api/pins", {"latitude": 10 + step * 0.01, "longitude": 20})["id"]
        settled(served, pin)
        album = api(served.origin, f"/api/pins/{pin}")["album"]
        if album["status"] == "no-images" and not empty:
            empty = pin
        if album["status"] == "complete" and not album["other_photos"] and not few:
            few = pin
        if empty and few:
            break
    assert empty and few, "no place without photos, or with few, found"
    page.goto(served.origin + f"/album?pin={empty}")
    expect(page.locator("body[data-ready=true]")).to_have_count(1)
    expect(page.locator("#empty")).to_be_visible()
    expect(page.get_by_text("No Images", exact=False)).to_have_count(1)
    expect(page.locator("#place .leaflet-marker-icon .pin.status-no-images")).to_have_count(1)
    expect(page.locator("#place .leaflet-marker-icon .pin.status-complete")).to_have_count(0)

    # Where the service has no other photos, New Collection is not offered, and the page says why.
    page.goto(served.origin + f"/album?pin={few}")
    expect(page.locator("body[data-ready=true]")).to_have_count(1)
    expect(page.locator("#status")).to_contain_text("no other photos here")
    expect(page.locator("#new-collection")).to_be_disabled()
    before = api(served.origin, "/api/state")["last_seq"]
    request = urllib.request.Request(served.origin + f"/api/pins/{few}/new-collection", data=b"", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 409
    assert json.loads(refused.value.read())["error"]["code"] == "no-other-photos"
    assert api(served.origin, "/api/state")["last_seq"] == before


def test_the_small_map_follows_the_album_from_downloading_to_complete(browser_page):
    page = browser_page
    server = Server(image_delay_ms=700)
    try:
        server.start()
        pin = server.post("/api/pins", {"latitude": 48.8584, "longitude": 2.2945})["id"]
        page.goto(server.origin + f"/album?pin={pin}")
        expect(page.locator("body[data-ready=true]")).to_have_count(1)
        expect(page.locator("#place .pin.status-complete")).to_have_count(1, timeout=30000)
        # New Collection: while the new set downloads (images take 700 ms each) the small
        # map's pin says so, and turns "complete" again once it has arrived.
        page.click("#new-collection")
        expect(page.locator("#place .pin.status-listing, #place .pin.status-downloading")).to_have_count(1)
        expect(page.locator("#place .pin.status-complete")).to_have_count(0)
        expect(page.locator("#place .pin.status-complete")).to_have_count(1, timeout=30000)
        expect(page.locator("#title")).to_have_text("Photos near Paris, France")
        expect(page.locator(".photo img")).to_have_count(PER_PAGE)
        page.screenshot(path=str(SHOTS / "album-named.png"))
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)


def lab(rgb):
    """CIE L*a*b* (D65) of an sRGB colour, for colour differences as people see them."""
    def linear(c):
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(c) for c in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in (x, y, z)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def test_the_legend_names_every_state_in_the_pins_colours_and_the_held_pin_is_unlike_them(served, browser_page):
    page = browser_page
    page.goto(served.origin + "/")
    expect(page.locator("#map[data-ready=true]")).to_have_count(1)
    statuses = ["not-requested", "downloading", "complete", "no-images", "failed"]
    colours = page.evaluate("""(statuses) => {
        const colour = (element) => getComputedStyle(element).backgroundColor;
        const pinColour = (classes) => {
            const element = document.createElement('div');
            element.className = classes;
            document.body.appendChild(element);
            const value = colour(element);
            element.remove();
            return value;
        };
        const legend = {};
        for (const entry of document.querySelectorAll('#legend [data-status]')) legend[entry.dataset.status] = colour(entry.querySelector('.dot'));
        const pins = {};
        for (const status of statuses) pins[status] = pinColour('pin status-' + status);
        pins.listing = pinColour('pin status-listing');
        return { legend, pins, held: pinColour('pin pending') };
    }""", statuses)
    assert sorted(colours["legend"]) == sorted(statuses), colours["legend"]
    for status in statuses:
        assert colours["legend"][status] == colours["pins"][status], status
    assert colours["pins"]["listing"] == colours["pins"]["downloading"]

    def rgb(text):
        return tuple(int(n) for n in re.findall(r"\d+", text)[:3])
    shown = {status: lab(rgb(colours["pins"][status])) for status in statuses}
    shown["held"] = lab(rgb(colours["held"]))
    names = list(shown)
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            difference = sum((a - b) ** 2 for a, b in zip(shown[first], shown[second])) ** 0.5
            assert difference > 25, f"{first} and {second} look alike (ΔE {difference:.1f})"

    # The held pin, on screen, wears that colour.
    page.mouse.move(400, 330)
    page.mouse.down()
    expect(page.locator(".pin.pending")).to_have_count(1)
    held = page.locator(".pin.pending").evaluate("e => getComputedStyle(e).backgroundColor")
    assert held == colours["held"]
    page.mouse.up()


def test_time_travel_shows_local_times_with_the_exact_time_on_hover(served, browser_page):
    page = browser_page
    served.post("/api/pins", {"latitude": 28.963, "longitude": -13.548})
    page.goto(served.origin + "/time")
    expect(page.locator("body[data-ready=true]")).to_have_count(1)
    first = events(served.origin, "PinDropped")[0]
    page.locator(f"#events li[data-seq='{first['seq']}']").click()
    when = page.locator("#when")
    expect(when).to_have_attribute("title", first["time"])
    text = when.inner_text()
    assert not ISO_TIME.search(text), f"a raw timestamp is shown: {text!r}"
    # The same moment, in the reader's zone (the context's: Madrid) and words.
    expected = page.evaluate("(iso) => new Date(iso).toLocaleString('en-GB', {dateStyle: 'medium', timeStyle: 'medium', timeZone: 'Europe/Madrid'})", first["time"])
    assert text == expected, (text, expected)
    page.screenshot(path=str(SHOTS / "time-travel-local.png"))


def test_a_banner_while_the_server_is_gone_and_the_page_catches_up_when_it_is_back(served, browser_page):
    page = browser_page
    served.post("/api/pins", {"latitude": 28.963, "longitude": -13.548})
    page.goto(served.origin + "/")
    expect(page.locator("#map[data-ready=true]")).to_have_count(1)
    expect(page.locator(".vt-pin")).to_have_count(1)
    expect(page.locator("#offline")).to_have_count(0)

    served.stop()
    expect(page.locator("#offline")).to_be_visible(timeout=10000)
    expect(page.locator("#offline")).to_contain_text("out of date")
    # While it is gone, the store changes (another writer: the command line).
    served.vt("pin", "drop", "48.8584", "2.2945")

    served.start()
    expect(page.locator("#offline")).to_be_hidden(timeout=15000)
    expect(page.locator(".vt-pin")).to_have_count(2, timeout=10000)
    # And live updates flow again.
    served.post("/api/pins", {"latitude": -33.8568, "longitude": 151.2153})
    expect(page.locator(".vt-pin")).to_have_count(3)
