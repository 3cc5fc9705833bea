// What every page shares: calls to the server's JSON routes, live updates, messages, and
// the map's base layers (tiles when configured, always a graticule beneath them).
"use strict";

const VT = {
  async api(method, path, body) {
    const options = { method, headers: {} };
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    const response = await fetch(path, options);
    const text = await response.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (_) { data = null; }
    if (!response.ok) {
      const message = data && data.error ? data.error.message : `${response.status} ${response.statusText}`;
      const error = new Error(message);
      error.status = response.status;
      throw error;
    }
    return data;
  },

  // Shows a message for a few seconds (errors the server explained).
  say(message) {
    let toast = document.getElementById("toast");
    if (!toast) {
      toast = document.createElement("div");
      toast.id = "toast";
      toast.setAttribute("role", "alert");
      document.body.appendChild(toast);
    }
    toast.textContent = message;
    toast.classList.add("shown");
    clearTimeout(VT.toastTimer);
    VT.toastTimer = setTimeout(() => toast.classList.remove("shown"), 5000);
  },

  // Follows /api/live: calls onChange(frame) for each change, and onResync(seq) when frames
  // may have been missed (first connection, reconnects, a gap in sequence numbers), with the
  // last sequence number the server named. While the
  // server cannot be reached a banner says that what the page shows may be out of date; the
  // page keeps trying (the browser's own retry, or a new stream when the browser gives up)
  // and catches up as soon as the server answers again.
  // onPhotos(frame), when given, is called for each `photos` frame: photos whose bytes a sync
  // stored after their album was shown.
  live(onChange, onResync, onPhotos) {
    let last = null, lost = false, source = null, timer = null;
    const connect = () => {
      source = new EventSource("/api/live");
      source.addEventListener("hello", (event) => {
        const hello = JSON.parse(event.data);
        const missed = lost || last === null || hello.seq !== last;
        lost = false;
        VT.connection(true);
        last = hello.seq;
        if (missed) onResync(hello.seq);
      });
      source.addEventListener("change", (event) => {
        const frame = JSON.parse(event.data);
        if (last !== null && frame.first > last + 1) { last = frame.seq; onResync(frame.seq); return; }
        last = frame.seq;
        onChange(frame);
      });
      if (onPhotos) source.addEventListener("photos", (event) => onPhotos(JSON.parse(event.data)));
      source.addEventListener("error", () => {
        lost = true;
        VT.connection(false);
        if (source.readyState === EventSource.CLOSED) {
          clearTimeout(timer);
          timer = setTimeout(connect, VT.RECONNECT_MS);
        }
      });
    };
    connect();
  },

  RECONNECT_MS: 1500,

  // The banner shown while the server is out of reach.
  connection(up) {
    let banner = document.getElementById("offline");
    if (!banner && !up) {
      banner = document.createElement("div");
      banner.id = "offline";
      banner.setAttribute("role", "alert");
      banner.textContent = "The server is not answering: what you see may be out of date. Reconnecting…";
      document.body.appendChild(banner);
    }
    if (banner) banner.hidden = up;
    document.body.dataset.connection = up ? "live" : "lost";
  },

  // Runs fn at most once at a time; a call while it runs makes it run once more after.
  serialized(fn) {
    let running = false, again = false;
    const run = async () => {
      if (running) { again = true; return; }
      running = true;
      try { do { again = false; await fn(); } while (again); }
      catch (error) { VT.say(error.message); }
      finally { running = false; }
    };
    return run;
  },

  async config() {
    if (!VT.configPromise) VT.configPromise = VT.api("GET", "/api/config");
    return VT.configPromise;
  },

  // Whether this page shows a read-only replica (vt serve --follow): it offers no changes.
  async readOnly() { return (await VT.config()).read_only; },

  // A badge in the header while the store is replicated (vt serve --replicate) or a replica
  // (--follow): how far behind the other side is, and the last error. Polled, since the lag
  // changes without any event here.
  // With sync through the cluster (vt serve --sync), the badge says what is left to send and
  // to receive; in a map of several devices the header names this one.
  async showReplication() {
    const config = await VT.config();
    document.body.classList.toggle("read-only", config.read_only);
    const header = document.querySelector("header");
    if (config.device_name) {
      const name = document.createElement("span");
      name.id = "device-name";
      name.textContent = config.device_name;
      name.title = "This device";
      header.insertBefore(name, header.querySelector("h1").nextSibling);
    }
    if (!config.replication) return;
    const badge = document.createElement("span");
    badge.id = "replication";
    header.insertBefore(badge, header.querySelector("h1").nextSibling);
    const update = async () => {
      try {
        const r = await VT.api("GET", "/api/replication");
        const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
        let text = r.lag_events === 0 ? "up to date" : `${plural(r.lag_events, "event")} behind`;
        if (r.pending_photos > 0) text += `, ${plural(r.pending_photos, "photo")} to upload`;
        // A forgotten place being taken out of the stream: a wait, not a failure.
        if (r.rewriting) text = `rewriting the stream, ${text}`;
        badge.textContent = (r.role === "replica" ? "Read-only replica · " : "Replicated · ") + text;
        let lag = r.lag_events;
        // Cut off from the cluster, "nothing to receive" is only what it held when last seen.
        const away = r.role === "sync" && r.connected === false;
        if (r.role === "sync") {
          const left = [];
          if (r.lag_events > 0) left.push(`${plural(r.lag_events, "event")} to send`);
          if (r.pending_photos > 0) left.push(`${plural(r.pending_photos, "photo")} to send`);
          if (r.receive_events > 0) left.push(`${plural(r.receive_events, "event")} to receive`);
          lag = r.lag_events + r.pending_photos + r.receive_events;
          badge.textContent = away ? `Sync · not connected${left.length ? ", " + left.join(", ") : ""}`
            : r.last_error ? `Sync · ${left.length ? left.join(", ") : "nothing to send"}`
            : left.length ? `Syncing · ${left.join(", ")}` : "Synced · up to date";
        }
        badge.title = (r.role === "sync" ? `Through ${r.servers}, with ${plural(r.peers, "other device")}` : `Stream ${r.stream} on ${r.servers}`)
          + (r.last_contact ? `\nLast contact with the cluster: ${new Date(r.last_contact).toLocaleString()}` : "")
          + (r.rewriting ? "\nThe stream is being rewritten to take a forgotten place out of it." : "")
          + (r.last_error ? `\nLast error: ${r.last_error}` : "");
        badge.dataset.state = r.last_error ? "error" : r.rewriting || lag > 0 || away ? "behind" : "current";
        badge.dataset.lag = lag;
      } catch (error) {
        badge.textContent = "Replication: no answer";
        badge.dataset.state = "error";
      }
    };
    await update();
    setInterval(update, 3000);
  },

  // A Leaflet map with the configured tiles over land (Natural Earth's countries, from
  // /land.json) and a graticule, so it is a world map without a network. The land is drawn
  // when no tile server is set, or once the tile server fails to answer.
  async makeMap(element, options) {
    const config = await VT.config();
    const map = L.map(element, Object.assign({ worldCopyJump: true, minZoom: 2 }, options || {}));
    for (const [name, z] of [["land", 140], ["graticule", 150]]) { // beneath the tiles (200)
      map.createPane(name);
      map.getPane(name).style.zIndex = z;
      map.getPane(name).style.pointerEvents = "none";
    }
    VT.graticule(map);
    if (config.tiles) {
      const tiles = L.tileLayer(config.tiles, {
        maxZoom: 19,
        attribution: config.tiles.includes("openstreetmap.org") ? "© OpenStreetMap contributors" : "",
      }).addTo(map);
      tiles.once("tileerror", () => VT.land(map));
    } else {
      VT.land(map);
    }
    return map;
  },

  // Draws the countries once per map; the file is fetched once per page (and cached).
  async land(map) {
    if (map.landDrawn) return;
    map.landDrawn = true;
    try {
      if (!VT.landPromise) VT.landPromise = fetch("/land.json").then((r) => { if (!r.ok) throw new Error(r.statusText); return r.json(); });
      const land = await VT.landPromise;
      const renderer = L.svg({ pane: "land" });
      const style = { pane: "land", renderer, interactive: false, color: "#a89f86", weight: 0.8, fillColor: "#efe8d6", fillOpacity: 1 };
      for (const country of land.countries) {
        const rings = country.rings.map((flat) => {
          const points = [];
          for (let i = 0; i < flat.length; i += 2) points.push([flat[i + 1], flat[i]]);
          return points;
        });
        L.polygon(rings, style).addTo(map);
      }
      map.attributionControl.addAttribution("Land: Natural Earth · Place names: GeoNames");
      map.getContainer().dataset.land = String(land.countries.length);
    } catch (error) {
      map.landDrawn = false;
      map.getContainer().dataset.land = "failed";
    }
  },

  graticule(map) {
    const layer = L.layerGroup().addTo(map);
    const draw = () => {
      layer.clearLayers();
      const zoom = map.getZoom();
      const step = zoom < 3 ? 30 : zoom < 5 ? 10 : zoom < 7 ? 5 : zoom < 9 ? 1 : zoom < 11 ? 0.25 : 0.05;
      const bounds = map.getBounds().pad(0.5);
      const style = { pane: "graticule", color: "#9fb2c4", weight: 1, interactive: false };
      const west = Math.max(bounds.getWest(), -540), east = Math.min(bounds.getEast(), 540);
      for (let lat = Math.ceil(Math.max(bounds.getSouth(), -90) / step) * step; lat <= Math.min(bounds.getNorth(), 90); lat += step) {
        layer.addLayer(L.polyline([[lat, west], [lat, east]], style));
      }
      for (let lon = Math.ceil(west / step) * step; lon <= east; lon += step) {
        layer.addLayer(L.polyline([[-90, lon], [90, lon]], style));
      }
    };
    map.on("zoomend moveend", draw);
    map.whenReady(draw);
  },

  pinIcon(status, pending) {
    return L.divIcon({
      className: "",
      html: `<div class="pin ${pending ? "pending" : "status-" + status}"></div>`,
      iconSize: [22, 22],
      iconAnchor: [11, 26],
    });
  },

  short(id) { return id.slice(0, 8); },

  // A log time ("2026-11-23T00:01:09.102367Z") as a person reads it, in their time zone; the
  // exact value goes in the element's title (shown on hover).
  time(iso) {
    const date = new Date(iso);
    if (Number.isNaN(date.getTime())) return iso;
    return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
  },

  // The album's title: the place in words when the server knows it, else the coordinates.
  placeTitle(pin) { return `Photos ${VT.placeText(pin)}`; },

  // "near Arrecife, Spain" (the map's summaries carry the text, a pin's album the object).
  placeText(pin) {
    if (!pin.place) return `near ${VT.place(pin.latitude, pin.longitude)}`;
    return typeof pin.place === "string" ? pin.place : pin.place.text;
  },

  place(latitude, longitude) {
    const ns = latitude >= 0 ? "N" : "S", ew = longitude >= 0 ? "E" : "W";
    return `${Math.abs(latitude).toFixed(4)}° ${ns}, ${Math.abs(longitude).toFixed(4)}° ${ew}`;
  },

  // "Why?": asks the server which events are behind a fact (docs/WHY.md) and shows them in
  // `box`: the fact, then each event with what it did and the rule, fewest first.
  async showWhy(box, query) {
    box.hidden = false;
    box.textContent = "Looking through the history…";
    try {
      const answer = await VT.api("GET", `/api/why?${new URLSearchParams(query)}`);
      box.textContent = "";
      const fact = document.createElement("p");
      fact.className = "why-fact";
      fact.textContent = answer.fact;
      box.appendChild(fact);
      const list = document.createElement("ol");
      list.className = "why-because";
      for (const reason of answer.because) {
        const item = document.createElement("li");
        item.dataset.seq = String(reason.seq);
        item.textContent = `Event ${reason.seq}${reason.device ? " on " + reason.device : ""} (${reason.type}, ${VT.time(reason.time)}): ${reason.says}`;
        list.appendChild(item);
      }
      box.appendChild(list);
      box.dataset.question = answer.question;
    } catch (error) {
      box.textContent = error.message;
    }
  },

  statusText(album) {
    switch (album.status) {
      case "not-requested": return "Not requested yet";
      case "listing": return "Asking the photo service…";
      case "downloading": return `Downloading ${album.downloaded} of ${album.photos.length}…`;
      case "complete": return `${album.photos.length} photo${album.photos.length === 1 ? "" : "s"}`;
      case "no-images": return "No Images";
      case "failed": return `The photo service failed: ${album.reason}`;
      default: return album.status;
    }
  },
};

VT.showReplication().catch(() => {});
