"""Forget this place (docs/EVENTS.md, "Forgetting a place"), as a person does it in Chromium: the
album page asks first, saying what will be gone; keeping the place changes nothing; forgetting it
takes the pin off the map and out of every point of time travel, while the history still shows
that something happened at each step.

Run with the other browser tests (scripts/test); the `vt` binary is found as there.
"""
import json
import re
import urllib.error
import urllib.request

from playwright.sync_api import expect

from test_web_app import SHOTS, api, events, server, page, wait_for  # noqa: F401 (fixtures)


def post(origin, path, body):
    request = urllib.request.Request(origin + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def status_of(origin, path):
    try:
        with urllib.request.urlopen(origin + path, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_forget_this_place_asks_first_then_erases_the_place_from_the_whole_history(server, page):
    origin = server
    kept = post(origin, "/api/pins", {"latitude": 48.8584, "longitude": 2.2945})["id"]
    secret = post(origin, "/api/pins", {"latitude": 12.3456789, "longitude": -65.4321987})["id"]
    page.goto(origin + f"/album?pin={secret}")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    # Both albums done: the kept place's downloads, still landing on a loaded machine, would
    # otherwise count as something the cancelled dialog appended.
    for pin in (secret, kept):
        wait_for("the album to fill", lambda: api(origin, f"/api/pins/{pin}")["album"]["status"] == "complete", timeout=40)
    last_before = api(origin, "/api/state")["seq"]

    # The confirmation says what will be gone; keeping the place changes nothing.
    page.click("#forget")
    dialog = page.locator("#forget-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("erased from the whole history")
    page.screenshot(path=str(SHOTS / "forget-confirmation.png"))
    page.click("#forget-cancel")
    expect(dialog).to_be_hidden()
    assert api(origin, "/api/state")["seq"] == last_before, "keeping the place appended nothing"
    assert status_of(origin, f"/api/pins/{secret}") == 200

    # Forgetting it: back to the map, the pin gone, the history saying only that things happened.
    answers = []

    def keep_answer(route):
        # The page leaves as soon as it is answered: the body is read on its way to the page.
        answer = route.fetch()
        answers.append(answer.json())
        route.fulfill(response=answer)

    page.route("**/forget", keep_answer)
    page.click("#forget")
    page.click("#forget-confirm")
    page.wait_for_url(re.compile(r"/$"))
    # The forget wrote its erasure receipt into the store (docs/PROOFS.md, "Erasure receipts").
    [answer] = answers
    assert re.fullmatch(rf"receipts/forget-{last_before + 1}-{secret}\.receipt", answer["receipt"]), answer
    expect(page.locator("#map[data-ready=true]")).to_be_visible()
    expect(page.locator(".vt-pin")).to_have_count(1)
    assert status_of(origin, f"/api/pins/{secret}") == 404
    assert status_of(origin, f"/api/pins/{kept}") == 200
    [forgotten_place] = events(origin, "PlaceForgotten")
    assert forgotten_place["pin"] == secret and forgotten_place["seq"] == last_before + 1
    erased = events(origin, "Forgotten")
    assert len(erased) == forgotten_place["erased_events"] > 0
    assert {event["forgotten_type"] for event in erased} >= {"PinDropped", "PhotosListed", "PhotoDownloaded"}
    assert all("pin" not in event and "latitude" not in event for event in erased)
    for seq in range(0, last_before + 1):
        state = api(origin, f"/api/state?at={seq}")
        assert [pin["id"] for pin in state["pins"]] in ([], [kept]), f"the place shows at event {seq}"
    assert "12.3456789" not in json.dumps(api(origin, "/api/events?limit=1000"))

    # The time-travel page lists the forgotten events by their kind, and does not fail on them.
    page.goto(origin + "/time")
    expect(page.locator("#events")).to_contain_text("Forgotten (PinDropped)")
