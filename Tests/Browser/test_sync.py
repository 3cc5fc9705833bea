"""Two devices of one map, each its own `vt serve --sync` through a real nats-server: what one
device does appears on the other's open pages, live (docs/SYNC.md).

Run with the other browser tests (scripts/test); the `vt` binary is found as there.
"""
import json
import re
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request

from playwright.sync_api import expect

from test_replication import nats, serve  # noqa: F401 (nats is a fixture)
from test_web_app import SHOTS, VT, api, browser_page, wait_for


def call(origin, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(origin + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.read()


def vt(*arguments):
    done = subprocess.run([str(VT), *arguments], capture_output=True, text=True)
    assert done.returncode == 0, f"vt {' '.join(arguments)}: {done.stderr}"
    return done.stdout


def two_devices(folder, nats):  # noqa: F811
    """A phone with one pin and a laptop cloned from it, each served with `--sync`."""
    phone_store, laptop_store = folder + "/phone", folder + "/laptop"
    vt("pin", "drop", "48.8584", "2.2945", "--store", phone_store)
    vt("device", "--name", "phone", "--store", phone_store)
    vt("clone", "--from", phone_store, "--to", laptop_store, "--name", "laptop")
    return serve(phone_store, "--sync", nats), serve(laptop_store, "--sync", nats)


def test_a_pin_dropped_or_removed_on_one_device_appears_on_the_others_open_map(nats):  # noqa: F811
    folder = tempfile.mkdtemp(prefix="vt-browser-sync-")
    (phone, phone_origin), (laptop, laptop_origin) = two_devices(folder, nats)
    try:
        with browser_page() as page:
            page.goto(phone_origin + "/")
            expect(page.locator("#map[data-ready=true]")).to_have_count(1)
            expect(page.locator("#device-name")).to_have_text("phone")
            expect(page.locator(".vt-pin")).to_have_count(1)
            badge = page.locator("#replication")
            expect(badge).to_have_text("Synced · up to date", timeout=30_000)
            expect(badge).to_have_attribute("title", re.compile(r"with 1 other device"))

            # The laptop drops a pin: the phone's open map shows it, without a reload.
            call(laptop_origin, "POST", "/api/pins", {"latitude": -33.86, "longitude": 151.21})
            expect(page.locator(".vt-pin")).to_have_count(2, timeout=30_000)
            page.screenshot(path=str(SHOTS / "sync-phone-map.png"))

            # The laptop removes the phone's first pin: it leaves the phone's map too.
            first = api(phone_origin, "/api/state")["pins"][0]["id"]
            call(laptop_origin, "DELETE", f"/api/pins/{first}")
            expect(page.locator(".vt-pin")).to_have_count(1, timeout=30_000)
            expect(page.locator(f".vt-pin[data-pin='{first}']")).to_have_count(0)

            # And the phone's own pin reaches the laptop.
            page.mouse.click(400, 300, button="right")
            expect(page.locator(".vt-pin")).to_have_count(2)
            # The page draws the pin as it asks the server; the drop is done once the store has it.
            wait_for("the phone's pin", lambda: len(api(phone_origin, "/api/state")["pins"]) == 2)
            page.goto(laptop_origin + "/")
            expect(page.locator("#device-name")).to_have_text("laptop")
            expect(page.locator(".vt-pin")).to_have_count(2, timeout=30_000)
            phone_pins = sorted(pin["id"] for pin in api(phone_origin, "/api/state")["pins"])
            laptop_pins = sorted(pin["id"] for pin in api(laptop_origin, "/api/state")["pins"])
            assert phone_pins == laptop_pins

            # The cluster goes away: the badge says the device is not connected (not "up to
            # date"), and says it is synced again once the cluster is back.
            nats.kill()
            expect(page.locator("#replication")).to_have_text(re.compile(r"^Sync · not connected"), timeout=30_000)
            nats.restart()
            expect(page.locator("#replication")).to_have_text("Synced · up to date", timeout=60_000)
        # A phone's screen: the header keeps the device's name and the sync badge inside it.
        with browser_page(viewport={"width": 390, "height": 844}) as page:
            page.goto(phone_origin + "/")
            expect(page.locator("#replication")).to_have_text(re.compile(r"^Sync"), timeout=30_000)
            for element in ("#device-name", "#replication", "#time-travel"):
                box = page.locator(element).bounding_box()
                assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, f"{element} is cut off: {box}"
            page.screenshot(path=str(SHOTS / "sync-phone-size.png"))
    finally:
        for process in (phone, laptop):
            if process.poll() is None:
                process.terminate()
                _, errors = process.communicate(timeout=30)
                assert process.returncode == 0, f"vt serve did not stop cleanly on SIGTERM ({process.returncode}); stderr:\n{errors[-4000:]}"
        shutil.rmtree(folder, ignore_errors=True)


def test_a_replica_of_a_map_of_two_devices_shows_both_devices_pins_live_and_offers_no_changes(nats):  # noqa: F811
    folder = tempfile.mkdtemp(prefix="vt-browser-map-replica-")
    (phone, phone_origin), (laptop, laptop_origin) = two_devices(folder, nats)
    replica = None
    try:
        call(laptop_origin, "POST", "/api/pins", {"latitude": -33.86, "longitude": 151.21})
        wait_for("the phone to take the laptop's pin", lambda: len(api(phone_origin, "/api/state")["pins"]) == 2, timeout=60)
        wait_for("the phone to have shipped what it took",
                 lambda: api(phone_origin, "/api/replication")["lag_events"] == 0, timeout=60)
        stream = api(phone_origin, "/api/replication")["stream"]
        # The phone's stream, followed: its map has two devices, so the replica holds both logs.
        replica, replica_origin = serve(folder + "/replica", "--follow", nats, "--stream", stream)
        with browser_page() as page:
            page.goto(replica_origin + "/")
            expect(page.locator("#map[data-ready=true]")).to_have_count(1)
            expect(page.locator("body.read-only")).to_have_count(1)
            expect(page.locator("#replication")).to_have_text(re.compile(r"^Read-only replica · "))
            expect(page.locator(".vt-pin")).to_have_count(2)
            # A drop is refused by the server, and nothing changes.
            try:
                call(replica_origin, "POST", "/api/pins", {"latitude": 1.0, "longitude": 2.0})
                raise AssertionError("the replica took a pin drop")
            except urllib.error.HTTPError as refused:
                assert "read-only" in refused.read().decode(), refused
            assert len(api(replica_origin, "/api/state")["pins"]) == 2
            # Each device's next pin appears on the replica's open map, live.
            call(laptop_origin, "POST", "/api/pins", {"latitude": 35.68, "longitude": 139.69})
            call(phone_origin, "POST", "/api/pins", {"latitude": 40.71, "longitude": -74.0})
            expect(page.locator(".vt-pin")).to_have_count(4, timeout=30_000)
            page.screenshot(path=str(SHOTS / "map-replica.png"))
        wait_for("the phone to have every pin", lambda: len(api(phone_origin, "/api/state")["pins"]) == 4, timeout=60)
        replica_pins = sorted(pin["id"] for pin in api(replica_origin, "/api/state")["pins"])
        phone_pins = sorted(pin["id"] for pin in api(phone_origin, "/api/state")["pins"])
        assert replica_pins == phone_pins
    finally:
        for process in (replica, phone, laptop):
            if process and process.poll() is None:
                process.terminate()
                _, errors = process.communicate(timeout=30)
                assert process.returncode == 0, f"vt serve did not stop cleanly on SIGTERM ({process.returncode}); stderr:\n{errors[-4000:]}"
        shutil.rmtree(folder, ignore_errors=True)


def test_the_time_travel_page_draws_its_point_again_when_another_devices_earlier_events_arrive(nats):  # noqa: F811
    folder = tempfile.mkdtemp(prefix="vt-browser-sync-time-")
    phone_store, laptop_store = folder + "/phone", folder + "/laptop"
    vt("pin", "drop", "48.8584", "2.2945", "--store", phone_store)
    vt("device", "--name", "phone", "--store", phone_store)
    vt("clone", "--from", phone_store, "--to", laptop_store, "--name", "laptop")
    # The laptop, not syncing, drops a pin before the phone's next ones: in the merged order of
    # the two devices' events it comes before them, whenever it arrives.
    vt("pin", "drop", "-33.86", "151.21", "--store", laptop_store)
    laptop_pin = json.loads(vt("pins", "--json", "--store", laptop_store).splitlines()[-1])
    assert laptop_pin["latitude"] == -33.86, laptop_pin
    phone, phone_origin = serve(phone_store, "--sync", nats)
    laptop = None
    try:
        tokyo = json.loads(call(phone_origin, "POST", "/api/pins", {"latitude": 35.68, "longitude": 139.69}))
        call(phone_origin, "POST", "/api/pins", {"latitude": 40.71, "longitude": -74.0})
        drops = api(phone_origin, "/api/events?from=1&limit=1000&type=PinDropped")["events"]
        point = next(event["seq"] for event in drops if event["pin"] == tokyo["id"])
        with browser_page() as page:
            page.goto(phone_origin + "/time")
            expect(page.locator("body[data-ready=true]")).to_have_count(1)
            page.locator("#slider").fill(str(point))
            expect(page.locator(f"#map[data-seq='{point}']")).to_have_count(1)
            expect(page.locator(f".vt-pin[data-pin='{tokyo['id']}']")).to_have_count(1)
            expect(page.locator(f".vt-pin[data-pin='{laptop_pin['id']}']")).to_have_count(0)

            # The laptop syncs: its pin, made before the point, is now part of the history up
            # to it, and the open page shows it there without being touched.
            laptop, _ = serve(laptop_store, "--sync", nats)
            expect(page.locator(f".vt-pin[data-pin='{laptop_pin['id']}']")).to_have_count(1, timeout=60_000)
            expect(page.locator(f"#map[data-seq='{point}']")).to_have_count(1)
            expect(page.locator("#events li[data-device='laptop']").first).to_be_visible()
            state = api(phone_origin, f"/api/state?at={point}")
            shown = sorted(page.locator(".vt-pin").evaluate_all("pins => pins.map(pin => pin.dataset.pin)"))
            assert shown == sorted(pin["id"] for pin in state["pins"]), "the page shows the point as the server has it now"
            page.screenshot(path=str(SHOTS / "sync-time-travel.png"))
    finally:
        for process in (laptop, phone):
            if process and process.poll() is None:
                process.terminate()
                _, errors = process.communicate(timeout=30)
                assert process.returncode == 0, f"vt serve did not stop cleanly on SIGTERM ({process.returncode}); stderr:\n{errors[-4000:]}"
        shutil.rmtree(folder, ignore_errors=True)
