"""Every page at a phone's size (390 × 844, a touch screen), as another device's browser opens
them through `vt serve --host`: nothing is wider than the screen, the album's title is whole
(on two lines rather than cut), and the time-travel page's panel sits under its map, readable,
with a slider as wide as the screen.

Run with the other browser tests (scripts/test).
"""
from playwright.sync_api import expect

from test_forget import post
from test_web_app import SHOTS, api, browser_page, server, wait_for  # noqa: F401 (fixtures)


def widths(page):
    return page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")


def test_every_page_fits_a_phones_screen(server):
    origin = server
    pin = post(origin, "/api/pins", {"latitude": 48.8584, "longitude": 2.2945})["id"]
    wait_for("the album to fill", lambda: api(origin, f"/api/pins/{pin}")["album"]["status"] == "complete", timeout=40)
    with browser_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True) as page:
        page.goto(origin + "/")
        expect(page.locator("#map[data-ready=true]")).to_be_visible()
        scroll, client = widths(page)
        assert scroll <= client, f"the map page is {scroll} px wide on a {client} px screen"
        page.screenshot(path=str(SHOTS / "phone-map.png"))

        page.goto(origin + f"/album?pin={pin}")
        expect(page.locator("body[data-ready=true]")).to_be_attached()
        expect(page.locator("#grid .photo img")).to_have_count(api(origin, f"/api/pins/{pin}")["album"]["downloaded"])
        scroll, client = widths(page)
        assert scroll <= client, f"the album is {scroll} px wide on a {client} px screen"
        title = page.locator("#title")
        expect(title).to_have_text("Photos near Paris, France")
        whole = title.evaluate("t => t.scrollHeight <= t.clientHeight + 1 && t.scrollWidth <= t.clientWidth + 1")
        assert whole, "the album's title is cut"
        assert page.locator("#forget").bounding_box()["x"] + page.locator("#forget").bounding_box()["width"] <= 390
        page.screenshot(path=str(SHOTS / "phone-album.png"))

        page.goto(origin + "/time")
        expect(page.locator("body[data-ready=true]")).to_be_attached()
        scroll, client = widths(page)
        assert scroll <= client, f"the time-travel page is {scroll} px wide on a {client} px screen"
        for part in ("#map", "aside", "#events", "#diff-go"):
            box = page.locator(part).first.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, f"{part} is not within the screen: {box}"
        aside, map_box = page.locator("aside").bounding_box(), page.locator("#map").bounding_box()
        assert aside["y"] >= map_box["y"] + map_box["height"] - 1, "the panel sits under the map"
        assert page.locator("#slider").bounding_box()["width"] >= 300, "the slider spans the screen"
        page.locator("#events li").last.scroll_into_view_if_needed()
        expect(page.locator("#events li").last).to_be_in_viewport()
        page.screenshot(path=str(SHOTS / "phone-time.png"), full_page=True)
