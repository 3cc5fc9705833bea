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

  // Follows /api/live: calls onChange(frame) for each change, and onResync() when frames
  // may have been missed (first connection, reconnects, a gap in sequence numbers).
  live(onChange, onResync) {
    let last = null;
    const source = new EventSource("/api/live");
    source.addEventListener("hello", (event) => {
      const hello = JSON.parse(event.data);
      if (last === null || hello.seq !== last) onResync();
      last = hello.seq;
    });
    source.addEventListener("change", (event) => {
      const frame = JSON.parse(event.data);
      if (last !== null && frame.first > last + 1) { last = frame.seq; onResync(); return; }
      last = frame.seq;
      onChange(frame);
    });
    return source;
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

  // A Leaflet map with the configured tiles over a plain background with a graticule, so it
  // still shows where things are without a network.
  async makeMap(element, options) {
    const config = await VT.config();
    const map = L.map(element, Object.assign({ worldCopyJump: true, minZoom: 2 }, options || {}));
    map.createPane("graticule");
    map.getPane("graticule").style.zIndex = 150; // beneath the tiles (200)
    map.getPane("graticule").style.pointerEvents = "none";
    VT.graticule(map);
    if (config.tiles) {
      L.tileLayer(config.tiles, {
        maxZoom: 19,
        attribution: config.tiles.includes("openstreetmap.org") ? "© OpenStreetMap contributors" : "",
      }).addTo(map);
    }
    return map;
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

  place(latitude, longitude) {
    const ns = latitude >= 0 ? "N" : "S", ew = longitude >= 0 ? "E" : "W";
    return `${Math.abs(latitude).toFixed(4)}° ${ns}, ${Math.abs(longitude).toFixed(4)}° ${ew}`;
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
