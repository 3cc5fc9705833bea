// A pin's photo album: a small map of the place, one placeholder per listed photo, each
// replaced by its image as soon as it arrives (live updates), "No Images" when there are
// none, New Collection once nothing is downloading, and a tap on a photo removes it. Under each
// photo a credit line (creator, licence, a link to the photo's own page) that its licence asks
// for; it sits beside the photo, not on it, so a tap on the photo still removes it and a tap on
// a link never does. When a merge with another device's events changed the album since this
// device last acted on it, a note says so, once.
"use strict";

(async () => {
  const id = new URLSearchParams(window.location.search).get("pin") || "";
  const grid = document.getElementById("grid");
  const status = document.getElementById("status");
  const empty = document.getElementById("empty");
  const newCollection = document.getElementById("new-collection");
  const retry = document.getElementById("retry");
  const whyBox = document.getElementById("why");
  // The album's state and New Collection's, both: the button says "Why?" of what is shown.
  document.getElementById("why-album").addEventListener("click", async () => {
    await VT.showWhy(whyBox, { fact: "album", pin: id });
    const button = document.createElement("div");
    whyBox.appendChild(button);
    await VT.showWhy(button, { fact: "new-collection", pin: id });
  });
  const tiles = new Map(); // "collection/slot/state" -> element, so images are not reloaded
  let shown = null;        // the pin as last shown
  let placeMap = null;
  const readOnly = await VT.readOnly().catch(() => false); // a replica: nothing to change here

  if (!/^[0-9a-fA-F]{16}$/.test(id)) {
    status.textContent = "This address names no pin. Go back to the map and tap one.";
    return;
  }

  function render(pin) {
    shown = pin;
    const album = pin.album;
    const title = document.getElementById("title");
    title.textContent = VT.placeTitle(pin);
    title.title = VT.place(pin.latitude, pin.longitude);
    document.title = `${title.textContent} — Virtual Tourist`;
    // "No Images" is said once, by the big label; the status line stays for the other states.
    const noOthers = album.status === "complete" && album.other_photos === false;
    status.textContent = album.status === "no-images" ? "" : VT.statusText(album) + (noOthers ? " · no other photos here" : "");
    // Another device asked for these photos, and only it answers: say so rather than spin.
    if (album.awaits_another_device) status.textContent = "Asked for on another device: its photos come when that device has them and a sync brings them here. New Collection asks for photos on this one.";
    status.dataset.status = album.status;
    empty.classList.toggle("shown", album.status === "no-images");
    newCollection.disabled = !album.new_collection_enabled || noOthers;
    newCollection.title = noOthers ? "The photo service has no other photos of this place" : "";
    const failedSlots = album.photos.some((photo) => photo.state === "failed");
    retry.hidden = !(album.status === "failed" || (failedSlots && album.new_collection_enabled));

    const wanted = [];
    for (const photo of album.photos) {
      const key = `${album.collection}/${photo.slot}/${photo.state}`;
      let card = tiles.get(key);
      if (!card) {
        card = document.createElement("figure");
        card.className = "card";
        const tile = document.createElement("div");
        card.appendChild(tile);
        tile.className = `photo ${photo.state}`;
        tile.dataset.slot = photo.slot;
        tile.title = photo.title || "";
        if (photo.state === "downloaded") {
          const image = document.createElement("img");
          image.src = `/photos/${photo.digest}`;
          image.dataset.digest = photo.digest;
          image.alt = photo.title || `Photo ${photo.slot + 1}`;
          tile.appendChild(image);
        } else if (photo.state === "failed") {
          tile.textContent = "Could not download";
        }
        if (photo.state !== "placeholder") {
          if (!readOnly) tile.addEventListener("click", () => removePhoto(album.collection, photo.slot, tile));
        }
        if (photo.credit) card.appendChild(creditLine(photo.credit));
        // "Why?" beside the photo, not on it: a tap on the photo removes it.
        const why = document.createElement("button");
        why.type = "button";
        why.className = "why-photo";
        why.dataset.slot = photo.slot;
        why.textContent = "Why?";
        why.title = "The events behind this photo";
        why.addEventListener("click", () => VT.showWhy(whyBox, { fact: "photo", pin: id, slot: photo.slot }));
        card.appendChild(why);
        tiles.set(key, card);
      }
      wanted.push(card);
    }
    // Removed photos' tiles go; the rest keep their order and flow up.
    const keep = new Set(wanted);
    for (const [key, tile] of tiles) { if (!keep.has(tile)) { tiles.delete(key); tile.remove(); } }
    wanted.forEach((tile, index) => { if (grid.children[index] !== tile) grid.insertBefore(tile, grid.children[index] || null); });

    if (!placeMap) showPlace(pin);
    else if (placeMap.marker) showPin(pin);
  }

  // The small map's pin wears the album's state, as on the big map.
  function showPin(pin) {
    const marker = placeMap.marker;
    marker.setLatLng([pin.latitude, pin.longitude]);
    if (marker.shownStatus !== pin.album.status) {
      marker.setIcon(VT.pinIcon(pin.album.status, false));
      marker.shownStatus = pin.album.status;
    }
    const element = marker.getElement();
    if (element) element.dataset.status = pin.album.status;
  }

  // Two short lines: the creator, then "page · CC BY-SA 4.0" (the page link first, so a long
  // licence name never hides it). Text only (never HTML), links only to http(s).
  function creditLine(credit) {
    const line = document.createElement("figcaption");
    line.className = "credit";
    const link = (text, url, className) => {
      if (!/^https?:\/\//i.test(url || "")) return document.createTextNode(text);
      const anchor = document.createElement("a");
      anchor.href = url;
      anchor.textContent = text;
      anchor.target = "_blank";
      anchor.rel = "noopener noreferrer";
      if (className) anchor.className = className;
      return anchor;
    };
    const row = (className, parts) => {
      const element = document.createElement("span");
      element.className = className;
      parts.forEach((part, index) => {
        if (index > 0) element.appendChild(document.createTextNode(" · "));
        element.appendChild(part);
      });
      return element;
    };
    line.appendChild(row("creator", [document.createTextNode(credit.creator || "Unknown creator")]));
    const terms = [];
    if (credit.page_url) terms.push(link("page", credit.page_url, "page-link"));
    if (credit.licence || credit.licence_url) terms.push(link(credit.licence || "licence", credit.licence_url, "licence"));
    if (terms.length) line.appendChild(row("terms", terms));
    line.title = [credit.creator, credit.licence, credit.date_taken && `taken ${credit.date_taken}`].filter(Boolean).join(" · ");
    return line;
  }

  async function showPlace(pin) {
    placeMap = { marker: null };
    const map = await VT.makeMap("place", { zoomControl: false, dragging: false, scrollWheelZoom: false, doubleClickZoom: false, touchZoom: false, boxZoom: false, keyboard: false });
    map.setView([pin.latitude, pin.longitude], 11);
    placeMap.marker = L.marker([pin.latitude, pin.longitude], { icon: VT.pinIcon(shown.album.status, false), interactive: false }).addTo(map);
    placeMap.marker.shownStatus = shown.album.status;
    showPin(shown);
  }

  async function removePhoto(collection, slot, tile) {
    tile.style.opacity = "0.4";
    try {
      render(await VT.api("DELETE", `/api/pins/${id}/photos/${slot}?collection=${collection}`));
    } catch (error) {
      tile.style.opacity = "";
      VT.say(`The photo was not removed: ${error.message}`);
    }
  }

  newCollection.addEventListener("click", async () => {
    newCollection.disabled = true;
    try { render(await VT.api("POST", `/api/pins/${id}/new-collection`)); }
    catch (error) { VT.say(error.message); refresh(); }
  });
  retry.addEventListener("click", async () => {
    retry.hidden = true;
    try { render(await VT.api("POST", `/api/pins/${id}/retry`)); }
    catch (error) { VT.say(error.message); refresh(); }
  });

  const forget = document.getElementById("forget");
  const forgetDialog = document.getElementById("forget-dialog");
  forget.addEventListener("click", () => forgetDialog.showModal());
  forgetDialog.addEventListener("close", async () => {
    if (forgetDialog.returnValue !== "forget") return;
    forget.disabled = true;
    status.textContent = "Forgetting this place…";
    try {
      await VT.api("POST", `/api/pins/${id}/forget`);
      location.href = "/";
    } catch (error) {
      forget.disabled = false;
      VT.say(`The place was not forgotten: ${error.message}`);
    }
  });

  const refresh = VT.serialized(async () => {
    try { render(await VT.api("GET", `/api/pins/${id}`)); }
    catch (error) {
      if (error.status === 404) { status.textContent = "This pin is no longer on the map."; newCollection.disabled = true; return; }
      throw error;
    }
  });

  // What a merge changed here that this device had not seen, said once (before the album is
  // opened: opening it may be an action of this device's, which has then seen everything).
  async function showNews() {
    const news = await VT.api("GET", `/api/pins/${id}/news`).catch(() => null);
    if (!news || news.changes.length === 0) return;
    const last = Math.max(...news.changes.map((change) => change.seq));
    const key = `vt-news-${id.toLowerCase()}`;
    if (Number(localStorage.getItem(key) || 0) >= last) return;
    localStorage.setItem(key, String(last));
    const box = document.getElementById("news");
    box.querySelector(".text").textContent = newsText(news);
    box.dataset.last = String(last);
    box.hidden = false;
  }

  function newsText(news) {
    const byDevice = new Map();
    for (const change of news.changes.filter((change) => change.folded)) {
      const counts = byDevice.get(change.device_label) || {};
      counts[change.type] = (counts[change.type] || 0) + 1;
      byDevice.set(change.device_label, counts);
    }
    const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
    const parts = [];
    for (const [device, counts] of byDevice) {
      const did = [];
      if (counts.PinDropped) did.push("dropped this pin");
      if (counts.PinDragged) did.push("moved it");
      if (counts.AlbumRequested) did.push("asked for this album");
      if (counts.CollectionReplaced) did.push(counts.CollectionReplaced === 1 ? "made a New Collection" : `made ${counts.CollectionReplaced} New Collections`);
      if (counts.PhotoRemoved) did.push(`removed ${plural(counts.PhotoRemoved, "photo")}`);
      if (counts.PhotoDownloaded) did.push(`brought ${plural(counts.PhotoDownloaded, "photo")}`);
      if (did.length) parts.push(`${device} ${did.join(", ")}`);
    }
    let text = parts.length ? `Merged from your other devices: ${parts.join("; ")}.` : "Your other devices acted on this album; the rules kept what you did here.";
    const gave = news.passed_over.filter((change) => change.type !== "DeviceSeen");
    if (gave.length) {
      const what = gave.some((change) => change.type === "CollectionReplaced") ? "Your New Collection here" : `${plural(gave.length, "change")} made here`;
      text += ` ${what} gave way to theirs (vt show ${gave[0].seq} says which rule decided).`;
    }
    return text;
  }
  document.querySelector("#news button").addEventListener("click", () => { document.getElementById("news").hidden = true; });

  await showNews();
  try {
    // Opening the album requests it if it never was (pre-fetch usually has already).
    render(await VT.api("POST", `/api/pins/${id}/album`));
  } catch (error) {
    status.textContent = error.status === 404 ? "There is no such pin (it may have been removed)." : error.message;
    return;
  }
  // A photo another device downloaded is shown as soon as a sync takes its event, and its
  // bytes come after: an image asked for before them failed, and loads again once they came.
  const reloadArrived = (frame) => {
    if (!frame.pins.includes(id.toLowerCase())) return;
    for (const image of grid.querySelectorAll("img")) {
      const digest = image.dataset.digest;
      if (frame.photos.includes(digest) && !(image.complete && image.naturalWidth > 0)) {
        image.src = `/photos/${digest}?arrived=${Date.now()}`;
      }
    }
  };
  VT.live((frame) => { if (frame.pins.includes(id.toLowerCase())) refresh(); }, refresh, reloadArrived);
  document.body.dataset.ready = "true";
})();
