// Time travel: a slider over the log's sequence numbers shows the map (and a chosen pin's
// album) as it was after that event; the events around it, filtered by type, each with its
// device in a store of several; and the difference between two points.
"use strict";

(async () => {
  const slider = document.getElementById("slider");
  const position = document.getElementById("position");
  const when = document.getElementById("when");
  const list = document.getElementById("events");
  const albumBox = document.getElementById("travel-album");
  const albumStatus = document.getElementById("travel-album-status");
  const markers = L.layerGroup();
  let chosenPin = null;
  let map;

  const config = await VT.config();
  const now = await VT.api("GET", "/api/state");
  map = await VT.makeMap("map");
  markers.addTo(map);
  if (now.region) {
    const r = now.region;
    map.fitBounds([[r.latitude - r.latitude_span / 2, r.longitude - r.longitude_span / 2], [r.latitude + r.latitude_span / 2, r.longitude + r.longitude_span / 2]]);
  } else {
    map.setView([30, 10], 2);
  }
  slider.max = String(now.last_seq);
  slider.value = String(now.last_seq);
  document.getElementById("diff-to").value = String(now.last_seq);

  const types = document.getElementById("types");
  for (const name of config.event_types) {
    const label = document.createElement("label");
    label.innerHTML = `<input type="checkbox" value="${name}" checked> ${name}`;
    types.appendChild(label);
  }
  types.addEventListener("change", () => showEvents());

  const showState = VT.serialized(async () => {
    const seq = Number(slider.value);
    position.textContent = String(seq);
    const state = await VT.api("GET", `/api/state?at=${seq}`);
    markers.clearLayers();
    for (const pin of state.pins) {
      const marker = L.marker([pin.latitude, pin.longitude], { icon: VT.pinIcon(pin.status, false), title: `Pin ${VT.short(pin.id)}` });
      marker.bindTooltip(VT.placeText(pin), { direction: "top", offset: [0, -24] });
      marker.on("click", () => { chosenPin = pin.id; showAlbum(); });
      marker.on("add", () => { const el = marker.getElement(); if (el) { el.dataset.pin = pin.id; el.classList.add("vt-pin"); } });
      markers.addLayer(marker);
    }
    document.getElementById("map").dataset.seq = String(seq);
    document.getElementById("map").dataset.pins = String(state.pins.length);
    await showAlbum();
    await showEvents();
  });

  const whyBox = document.getElementById("why");
  const whyPin = document.getElementById("why-pin");
  whyPin.addEventListener("click", () => VT.showWhy(whyBox, { fact: "pin", pin: chosenPin, at: slider.value }));

  async function showAlbum() {
    albumBox.textContent = "";
    whyBox.hidden = true;
    whyPin.hidden = !chosenPin;
    if (!chosenPin) return;
    const seq = Number(slider.value);
    try {
      const pin = await VT.api("GET", `/api/pins/${chosenPin}?at=${seq}`);
      albumStatus.textContent = `${VT.placeTitle(pin)} (pin ${VT.short(pin.id)}): ${VT.statusText(pin.album)}`;
      for (const photo of pin.album.photos) {
        const tile = document.createElement("div");
        tile.className = `photo ${photo.state}`;
        if (photo.state === "downloaded") {
          const image = document.createElement("img");
          image.src = `/photos/${photo.digest}`;
          image.alt = photo.title || "";
          // Photos removed long ago may have been collected: say so instead of a broken image.
          image.addEventListener("error", () => { tile.className = "photo gone"; tile.textContent = "collected"; });
          tile.appendChild(image);
        }
        // A tap asks why the photo is as it was then.
        tile.dataset.slot = photo.slot;
        tile.title = "Why is this photo here?";
        tile.addEventListener("click", () => VT.showWhy(whyBox, { fact: "photo", pin: chosenPin, slot: photo.slot, at: seq }));
        albumBox.appendChild(tile);
      }
    } catch (error) {
      albumStatus.textContent = error.status === 404 ? `Pin ${VT.short(chosenPin)} is not on the map after event ${seq}.` : error.message;
    }
  }

  async function showEvents() {
    const seq = Number(slider.value);
    const chosen = [...types.querySelectorAll("input:checked")].map((box) => box.value);
    list.textContent = "";
    if (chosen.length === 0) return;
    const from = Math.max(1, seq - 30);
    const filter = chosen.length === config.event_types.length ? "" : `&type=${chosen.join(",")}`;
    const page = await VT.api("GET", `/api/events?from=${from}&limit=60${filter}`);
    // A store of several devices: each event names its device (a colour each, this one first),
    // and one made without knowing of another device's just before is marked "at once".
    const devices = new Map((page.devices || []).map((device, index) => [device.device, { ...device, index }]));
    showDevices(page.devices || []);
    for (const event of page.events) {
      const item = document.createElement("li");
      item.textContent = `${event.seq} ${event.type}${event.forgotten_type ? " (" + event.forgotten_type + ")" : ""}${event.pin ? " " + VT.short(event.pin) : ""}${event.slot !== undefined ? " #" + event.slot : ""}`;
      item.title = event.time;
      item.dataset.seq = event.seq;
      const device = devices.get(event.device);
      if (device) {
        const mark = document.createElement("span");
        mark.className = `device device-${device.index % 6}`;
        mark.textContent = device.label;
        mark.title = `${device.this ? "this device" : "device " + device.device}, its event ${event.device_seq}`;
        item.prepend(mark);
        item.dataset.device = device.label;
      }
      if (event.at_once_with) {
        const names = event.at_once_with.map((id) => (devices.get(id) || { label: VT.short(id) }).label);
        const mark = document.createElement("span");
        mark.className = "at-once-mark";
        mark.textContent = "⇄";
        mark.title = `made at once with ${names.join(", ")}: without knowing of ${names.length === 1 ? "its" : "their"} events just before`;
        item.appendChild(mark);
        item.classList.add("at-once");
        item.dataset.atOnceWith = names.join(",");
      }
      if (event.seq === seq) {
        item.classList.add("current");
        when.textContent = VT.time(event.time);
        when.title = event.time; // the exact time, on hover
        when.dataset.time = event.time;
      }
      if (event.seq > seq) item.classList.add("future");
      item.addEventListener("click", () => { slider.value = String(event.seq); showState(); });
      list.appendChild(item);
    }
    if (seq === 0) { when.textContent = "before the first event"; when.title = ""; delete when.dataset.time; }
  }

  function showDevices(list) {
    const box = document.getElementById("devices");
    box.textContent = "";
    box.hidden = list.length === 0;
    list.forEach((device, index) => {
      const mark = document.createElement("span");
      mark.className = `device device-${index % 6}`;
      mark.textContent = device.this ? `${device.label} (this device)` : device.label;
      mark.title = `device ${device.device}`;
      box.appendChild(mark);
    });
  }

  document.getElementById("diff-go").addEventListener("click", async () => {
    const from = document.getElementById("diff-from").value, to = document.getElementById("diff-to").value;
    const box = document.getElementById("diff");
    try {
      const diff = await VT.api("GET", `/api/diff?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`);
      box.textContent = describeDiff(diff);
    } catch (error) { box.textContent = error.message; }
  });

  function describeDiff(diff) {
    const lines = [];
    if (diff.region) lines.push("the map's region changed");
    for (const pin of diff.pins_added || []) lines.push(`+ pin ${VT.short(pin.id)} at ${VT.place(pin.latitude, pin.longitude)}`);
    for (const pin of diff.pins_removed || []) lines.push(`- pin ${VT.short(pin.id)}`);
    for (const move of diff.pins_moved || []) lines.push(`~ pin ${VT.short(move.pin)} moved`);
    const added = (diff.photos_added || []).length, removed = (diff.photos_removed || []).length;
    if (added) lines.push(`+ ${added} photo${added === 1 ? "" : "s"}`);
    if (removed) lines.push(`- ${removed} photo${removed === 1 ? "" : "s"}`);
    return lines.length ? lines.join("\n") : "no difference";
  }

  slider.addEventListener("input", () => showState());
  // The log grows while the page is open: the slider's end follows it. In a store of several
  // devices another device's events can sort before the point shown (made earlier, taken now):
  // the history up to it changed, so the point is drawn again. Frames missed: the same.
  const follow = (last, first) => {
    const atEnd = Number(slider.value) === Number(slider.max);
    slider.max = String(last);
    if (atEnd) slider.value = String(last);
    if (atEnd || first <= Number(slider.value)) showState();
  };
  VT.live((frame) => follow(frame.seq, frame.first), (last) => follow(last, 0));
  await showState();
  document.body.dataset.ready = "true";
})();
