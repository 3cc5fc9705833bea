"""Why? (docs/WHY.md), as a person asks it in Chromium: on the album, under a photo and beside
the album's status; on the time-travel page, for a pin and a photo as they were at a point. Each
answer shows the fact and the events behind it, which the server's own answer names.

Run with the other browser tests (scripts/test); the `vt` binary is found as there.
"""
import re

from playwright.sync_api import expect

from test_forget import post
from test_web_app import SHOTS, api, events, server, page, wait_for  # noqa: F401 (fixtures)


def test_why_names_the_events_behind_a_photo_the_album_and_a_pin(server, page):
    origin = server
    pin = post(origin, "/api/pins", {"latitude": 48.8584, "longitude": 2.2945})["id"]
    wait_for("the album to fill", lambda: api(origin, f"/api/pins/{pin}")["album"]["status"] == "complete", timeout=40)
    dropped_at = events(origin, "PinDropped")[0]["seq"]

    # Under a photo: the download that filled it, then the listing it rests on.
    page.goto(origin + f"/album?pin={pin}")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    page.locator(".why-photo[data-slot='0']").click()
    why = page.locator("#why")
    expect(why.locator(".why-fact")).to_contain_text("photo 0 of collection 1")
    expect(why.locator(".why-fact")).to_contain_text("is downloaded")
    expect(why.locator(".why-because li").first).to_contain_text("PhotoDownloaded")
    expected = api(origin, f"/api/why?fact=photo&pin={pin}&slot=0")["because"]
    shown = [int(item) for item in why.locator(".why-because li").evaluate_all("items => items.map(i => i.dataset.seq)")]
    assert shown == [reason["seq"] for reason in expected]
    assert api(origin, "/api/state")["pins"][0]["downloaded"] > 0, "asking why removed nothing"

    # Beside the status: the album's state, and New Collection's.
    page.click("#why-album")
    expect(why.locator(".why-fact").first).to_contain_text("shows collection 1: complete")
    expect(why).to_contain_text("New Collection is enabled")
    page.screenshot(path=str(SHOTS / "album-why.png"))

    # Time travel: the pin as it was at its drop, and a photo as it was at the end.
    page.goto(origin + "/time")
    expect(page.locator("body[data-ready=true]")).to_have_count(1)
    page.locator("#slider").fill(str(dropped_at))
    expect(page.locator(f"#map[data-seq='{dropped_at}']")).to_have_count(1)
    page.locator(".vt-pin").click()
    page.click("#why-pin")
    expect(page.locator("#why .why-fact")).to_have_text(re.compile(rf"pin {pin} is at 48\.8584, 2\.2945"))
    expect(page.locator("#why .why-because li")).to_have_count(1)
    expect(page.locator(f"#why .why-because li[data-seq='{dropped_at}']")).to_contain_text("PinDropped")
    last = api(origin, "/api/state")["seq"]
    page.locator("#slider").fill(str(last))
    expect(page.locator(f"#map[data-seq='{last}']")).to_have_count(1)
    page.locator(".vt-pin").click()
    page.locator("#travel-album .photo[data-slot='1']").click()
    expect(page.locator("#why .why-fact")).to_contain_text("photo 1 of collection 1")
