// The map: opens at the region last left, saves the region once the map settles, drops a
// pin on touch-and-hold or right-click (the pin follows the pointer until release), lets
// pins be dragged, and opens a pin's album when it is tapped. Pins show their album's state.
"use strict";

(async () => {
  const HOLD_MS = 500;        // touch-and-hold time before a pin drops
  const SLOP_PX = 8;          // movement allowed while holding before it counts as a pan
  const SETTLE_MS = 600;      // the map must rest this long before its region is saved

  let map;
  const markers = new Map(); // pin id -> Leaflet marker
  const element = document.getElementById("map");
  let readOnly = false; // a replica (vt serve --follow): pins are shown, never changed

  try {
    const now = await VT.api("GET", "/api/state");
    readOnly = await VT.readOnly();
    if (readOnly) document.getElementById("hint").firstChild.textContent = "A read-only replica: it follows the original store live. Tap a pin to see its photos. ";
    map = await VT.makeMap(element, { zoomControl: true });
    if (now.region) {
      // The centre exactly, and the zoom that shows the saved longitude span (linear on the
      // map, unlike latitude; shrunk a hair so rounding never picks the next zoom out).
      const r = now.region, w = r.longitude_span * 0.4995;
      const zoom = map.getBoundsZoom([[r.latitude, r.longitude - w], [r.latitude, r.longitude + w]]);
      map.setView([r.latitude, r.longitude], zoom, { animate: false });
    } else {
      map.setView([30, 10], 2);
    }
    showPins(now.pins);
  } catch (error) {
    VT.say(`The map could not load: ${error.message}`);
    return;
  }
  // The view, for people reading the page's state (and its tests): "lat,lon,zoom".
  const noteView = () => { const c = map.getCenter(); element.dataset.view = `${c.lat.toFixed(5)},${c.lng.toFixed(5)},${map.getZoom()}`; };
  noteView();
  map.on("moveend", noteView);
  element.dataset.ready = "true";

  // --- The region: saved once the map settles, and before leaving the page.
  let settleTimer = null, pendingRegion = null;
  const regionNow = () => {
    const b = map.getBounds(), c = map.getCenter().wrap();
    const latitudeSpan = Math.min(180, Math.max(1e-9, b.getNorth() - b.getSouth()));
    const longitudeSpan = Math.min(360, Math.max(1e-9, b.getEast() - b.getWest()));
    return { latitude: Math.max(-90, Math.min(90, c.lat)), longitude: c.lng, latitude_span: latitudeSpan, longitude_span: longitudeSpan };
  };
  const saveRegion = async (keepalive) => {
    clearTimeout(settleTimer);
    const region = pendingRegion;
    pendingRegion = null;
    if (!region) return;
    const options = { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify(region), keepalive: !!keepalive };
    const response = await fetch("/api/region", options);
    if (!response.ok) VT.say(`The map's place was not saved: ${(await response.json()).error.message}`);
  };
  // Registered after the first view is set, so opening the page appends nothing.
  map.on("moveend", () => {
    if (readOnly) return;
    pendingRegion = regionNow();
    clearTimeout(settleTimer);
    settleTimer = setTimeout(() => saveRegion(false), SETTLE_MS);
  });
  window.addEventListener("pagehide", () => { if (pendingRegion) saveRegion(true); });

  // --- Pins.
  function showPins(pins) {
    const seen = new Set();
    for (const pin of pins) {
      seen.add(pin.id);
      let marker = markers.get(pin.id);
      if (!marker) {
        marker = L.marker([pin.latitude, pin.longitude], { draggable: !readOnly, autoPan: true, title: `Pin ${VT.short(pin.id)}` });
        marker.pinID = pin.id;
        marker.on("click", () => openAlbum(pin.id));
        marker.on("dragstart", () => { marker.beingDragged = true; });
        marker.on("dragend", () => { marker.beingDragged = false; dragPin(marker); });
        marker.addTo(map);
        markers.set(pin.id, marker);
      } else if (!marker.beingDragged) {
        marker.setLatLng([pin.latitude, pin.longitude]);
      }
      // The tooltip names the place ("near Arrecife, Spain").
      const place = VT.placeText(pin);
      if (marker.shownPlace !== place) {
        if (marker.getTooltip()) marker.setTooltipContent(place);
        else marker.bindTooltip(place, { direction: "top", offset: [0, -24] });
        marker.shownPlace = place;
        const el = marker.getElement();
        if (el) el.dataset.place = place;
      }
      if (marker.shownStatus !== pin.status) {
        marker.setIcon(VT.pinIcon(pin.status, false));
        marker.shownStatus = pin.status;
        const el = marker.getElement();
        if (el) { el.dataset.pin = pin.id; el.dataset.status = pin.status; el.dataset.place = place; el.classList.add("vt-pin"); }
      }
    }
    for (const [id, marker] of markers) {
      if (!seen.has(id)) { marker.remove(); markers.delete(id); }
    }
  }

  const refresh = VT.serialized(async () => showPins((await VT.api("GET", "/api/state")).pins));
  VT.live((frame) => { if (frame.pins.length) refresh(); }, refresh);

  async function openAlbum(id) {
    await saveRegion(false).catch(() => {});
    window.location.href = `/album?pin=${encodeURIComponent(id)}`;
  }

  async function dragPin(marker) {
    const place = marker.getLatLng().wrap();
    try {
      await VT.api("POST", `/api/pins/${marker.pinID}/drag`, { latitude: place.lat, longitude: place.lng });
    } catch (error) {
      VT.say(`The pin was not moved: ${error.message}`);
    }
    refresh();
  }

  // --- Dropping a pin: touch-and-hold (or hold the mouse button), or right-click. A
  // provisional pin appears where pressed and follows the pointer; on release it is dropped
  // where it is, and the album's pre-fetch starts.
  let press = null; // { id, x, y, timer, marker }
  const latLngOf = (event) => map.mouseEventToLatLng(event);

  element.addEventListener("pointerdown", (event) => {
    if (readOnly || press || event.target.closest(".leaflet-marker-icon, .leaflet-control")) return;
    press = { id: event.pointerId, x: event.clientX, y: event.clientY, marker: null, timer: null, event };
    if (event.button === 2) { start(event); return; }
    if (event.button !== 0) { press = null; return; }
    press.timer = setTimeout(() => start(press.event), HOLD_MS);
  });

  function start(event) {
    if (!press || press.marker) return;
    map.dragging.disable();
    press.marker = L.marker(latLngOf(event), { icon: VT.pinIcon("", true), interactive: false, keyboard: false }).addTo(map);
    try { element.setPointerCapture(press.id); } catch (_) {}
    if (navigator.vibrate) navigator.vibrate(20);
  }

  element.addEventListener("pointermove", (event) => {
    if (!press || event.pointerId !== press.id) return;
    press.event = event;
    if (press.marker) {
      press.marker.setLatLng(latLngOf(event));
    } else if (Math.hypot(event.clientX - press.x, event.clientY - press.y) > SLOP_PX) {
      clearTimeout(press.timer); // a pan, not a hold
      press = null;
    }
  });

  const finish = async (event, cancelled) => {
    if (!press || event.pointerId !== press.id) return;
    const done = press;
    press = null;
    clearTimeout(done.timer);
    if (!done.marker) return;
    map.dragging.enable();
    const place = done.marker.getLatLng().wrap();
    if (cancelled) { done.marker.remove(); return; }
    try {
      const pin = await VT.api("POST", "/api/pins", { latitude: place.lat, longitude: place.lng });
      await refresh();
      if (!markers.has(pin.id)) showPins([{ ...pin, status: pin.album.status }]);
    } catch (error) {
      VT.say(`The pin was not dropped: ${error.message}`);
    } finally {
      done.marker.remove();
    }
  };
  element.addEventListener("pointerup", (event) => finish(event, false));
  element.addEventListener("pointercancel", (event) => finish(event, true));
  element.addEventListener("contextmenu", (event) => event.preventDefault());
})();
