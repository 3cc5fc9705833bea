"""The offline photo service takes a new port on every start: an album whose downloads a kill -9
cut short is finished by the next `vt serve`, from the service as it is then, and the page shows
every photo (issue 46; DemoPhotoSource).

Run with the other browser tests (scripts/test); the `vt` binary is found as there.
"""
import shutil
import tempfile

from playwright.sync_api import expect

from test_forget import post
from test_replication import serve
from test_web_app import PER_PAGE, api, page, wait_for  # noqa: F401 (fixtures)


def test_an_album_cut_short_by_kill_9_is_finished_after_a_restart(page):
    folder = tempfile.mkdtemp(prefix="vt-restart-")
    store = folder + "/store"
    first, origin = serve(store, VT_DEMO_IMAGE_DELAY_MS="10000")
    second = None
    try:
        pin = post(origin, "/api/pins", {"latitude": 48.8584, "longitude": 2.2945})["id"]
        wait_for("the listing", lambda: len(api(origin, f"/api/pins/{pin}")["album"]["photos"]) == PER_PAGE, timeout=40)
        assert api(origin, f"/api/pins/{pin}")["album"]["status"] == "downloading"
        first.kill()
        first.communicate(timeout=20)

        second, origin = serve(store, VT_DEMO_IMAGE_DELAY_MS="0")
        album = wait_for("the album finished", lambda: (lambda album: album["status"] == "complete" and album)(
            api(origin, f"/api/pins/{pin}")["album"]), timeout=60)
        assert [photo["state"] for photo in album["photos"]] == ["downloaded"] * PER_PAGE, album
        failures = api(origin, "/api/events?type=PhotoDownloadFailed&limit=1000")["events"]
        assert failures == [], f"downloads failed after the restart: {failures[:3]}"

        page.goto(origin + f"/album?pin={pin}")
        expect(page.locator("body[data-ready=true]")).to_be_attached()
        expect(page.locator(".photo.downloaded img")).to_have_count(PER_PAGE)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.photo.downloaded img')].every(i => i.complete && i.naturalWidth > 0)")
        expect(page.locator("#retry")).to_be_hidden()
    finally:
        for process in (first, second):
            if process and process.poll() is None:
                process.terminate()
                process.communicate(timeout=20)
        shutil.rmtree(folder, ignore_errors=True)
