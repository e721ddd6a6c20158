"use strict";
// zkr ui's page. Without a #fragment it is the overview, /api/overview: every
// recipe under the root; with one, the node it names, /api/node. It reads what it
// shows again whenever /api/events says the copy changed. Every piece is built
// with DOM calls, and every name or datum from ZooKeeper is set as text: nothing
// read from ZooKeeper is ever parsed as markup.
(function () {
  const pageSize = 100;
  const maxTimeline = 20;
  const st = {
    root: "/", path: null, offset: 0, node: null, fetchedAt: 0,
    conn: "loading", streaming: false, holdWarn: 600,
    timelines: new Map(), // path -> [{at, text}]: the hand-overs this page saw
    inflight: false, again: false,
  };
  // What tests and measurements read: renders so far, and the change sequence shown.
  // path is null on the overview.
  window.zkrUI = { renders: 0, seq: -1, path: null };

  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === "class") e.className = v;
      else e.setAttribute(k, String(v));
    }
    for (const k of kids) {
      if (k !== null && k !== undefined) e.append(k instanceof Node ? k : String(k));
    }
    return e;
  }

  function $(id) { return document.getElementById(id); }

  function href(p) {
    return "#" + p.split("/").map(encodeURIComponent).join("/");
  }

  function pathFromHash() {
    const h = location.hash.slice(1);
    if (!h) return null; // the overview
    try { return h.split("/").map(decodeURIComponent).join("/") || "/"; } catch (e) { return st.root; }
  }

  function join(parent, name) { return parent === "/" ? "/" + name : parent + "/" + name; }

  function duration(s) {
    s = Math.max(0, Math.floor(s));
    const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = s % 60;
    return (h ? h + "h" : "") + (h || m ? m + "m" : "") + sec + "s";
  }

  function bytesText(blob) {
    if (!blob) return "";
    if (blob.text !== undefined) return blob.text;
    if (!blob.base64) return "";
    const raw = atob(blob.base64);
    let hex = "0x";
    for (let i = 0; i < raw.length; i++) hex += raw.charCodeAt(i).toString(16).padStart(2, "0");
    return hex;
  }

  // --- connection -----------------------------------------------------------

  const notes = {
    suspended: "Suspended: zkr ui lost its connection to ZooKeeper. This is the last picture it had, and it may be stale.",
    lost: "Session lost: ZooKeeper ended zkr ui's session. It is reading everything again; until then this picture may be stale.",
    unreachable: "zkr ui is unreachable: this page no longer hears changes, and the picture may be stale.",
  };

  function showConn() {
    const c = st.streaming ? st.conn : (st.conn === "loading" ? "loading" : "unreachable");
    const badge = $("conn");
    badge.textContent = c;
    badge.setAttribute("data-connection", c);
    const note = notes[c];
    $("banner").hidden = !note;
    $("banner").textContent = note || "";
    document.body.classList.toggle("stale", !!note);
  }

  function listen() {
    const es = new EventSource("/api/events");
    es.addEventListener("change", (e) => {
      const c = JSON.parse(e.data);
      st.conn = c.connection;
      st.streaming = true;
      showConn();
      if (c.seq !== window.zkrUI.seq) load();
    });
    es.onerror = () => { st.streaming = false; showConn(); };
  }

  // --- reading --------------------------------------------------------------

  async function load() {
    if (st.inflight) { st.again = true; return; }
    st.inflight = true;
    try {
      const p = st.path;
      const r = await fetch(p === null ? "/api/overview" :
        "/api/node?path=" + encodeURIComponent(p) + "&offset=" + st.offset + "&limit=" + pageSize);
      const n = await r.json();
      if (p === st.path) {
        if (!r.ok) renderError(n.error || r.statusText);
        else if (p === null) renderOverview(n);
        else render(n);
      }
    } catch (e) {
      renderError(String(e));
    } finally {
      st.inflight = false;
      if (st.again) { st.again = false; load(); }
    }
  }

  function go() {
    const p = pathFromHash();
    if (p !== st.path) { st.path = p; st.offset = 0; }
    load();
  }

  // --- drawing --------------------------------------------------------------

  function render(n) {
    st.node = n;
    st.fetchedAt = Date.now();
    renderCrumbs(n.path);
    $("overview").replaceChildren();
    $("recipe").replaceChildren(...recipeView(n));
    $("timeline").replaceChildren(...timelineView(n));
    $("node").replaceChildren(...nodeView(n));
    $("children").replaceChildren(...childrenView(n));
    rendered(n.seq, n.path);
  }

  function renderOverview(o) {
    st.fetchedAt = Date.now();
    $("crumbs").replaceChildren(el("span", null, "Overview of " + o.root + " · "),
      el("a", { href: href(o.root), id: "browse" }, "browse the nodes under " + o.root));
    for (const id of ["recipe", "timeline", "node", "children"]) $(id).replaceChildren();
    $("overview").replaceChildren(...overviewView(o));
    rendered(o.seq, null);
  }

  function rendered(seq, path) {
    tick();
    window.zkrUI.renders++;
    window.zkrUI.seq = seq;
    window.zkrUI.path = path;
    if (window.zkrUI.renders === 1) performance.mark("zkr-rendered");
  }

  function renderError(msg) {
    $("recipe").replaceChildren(el("h2", null, "Cannot show this path"), el("p", null, msg));
    for (const id of ["overview", "timeline", "node", "children"]) $(id).replaceChildren();
  }

  function renderCrumbs(p) {
    const parts = [el("a", { href: "#", id: "to-overview" }, "overview"), " · ", el("a", { href: href("/") }, "/")];
    let at = "";
    for (const seg of p.split("/").filter(Boolean)) {
      at += "/" + seg;
      parts.push(at.length > seg.length + 1 ? "/" : "", el("a", { href: href(at) }, seg));
    }
    $("crumbs").replaceChildren(...parts);
  }

  const recipeNames = {
    mutex: "lock (mutex or leader selector)", latch: "leader election (latch)", rwlock: "read/write lock",
    semaphore: "semaphore", leases: "semaphore leases", partition: "partition", group: "group",
    count: "shared count", counter: "counter",
  };

  function recipeView(n) {
    const r = n.recipe;
    if (!r) return n.recipe_note ? [el("p", { class: "muted" }, n.recipe_note)] : [];
    const title = el("h2", null, recipeNames[r.recipe] || r.recipe);
    switch (r.recipe) {
      case "partition": return [title, ...partitionView(r)];
      case "group": return [title, groupView(r)];
      case "count": case "counter":
        return [title, el("p", { "data-value": r.number }, String(r.number), el("span", { class: "muted" }, " version " + r.version))];
    }
    return [title, queueView(r)];
  }

  function queueView(q) {
    const holding = q.participants.filter((p) => p.state !== "waiting").length;
    const body = q.participants.map((p, i) => {
      const rel = p.node.slice(p.node.lastIndexOf("/") + 1);
      return el("tr", { "data-state": p.state, "data-id": p.id, "data-kind": p.kind },
        el("td", null, String(i + 1)), el("td", null, p.state), el("td", null, p.kind),
        el("td", { class: "text" }, p.id), el("td", null, p.session),
        el("td", { "data-age": p.age_seconds, "data-hold": p.state !== "waiting" ? "1" : "0" }),
        el("td", null, String(p.fencing_token)), el("td", { class: "text muted" }, rel));
    });
    return el("div", null,
      el("p", null, holding + " holding, " + (q.participants.length - holding) + " waiting"),
      el("table", null,
        el("thead", null, el("tr", null, ...["#", "state", "kind", "id", "session", "for", "token", "node"].map((h) => el("th", null, h)))),
        el("tbody", null, ...body)));
  }

  function partitionView(r) {
    const items = r.items || [];
    const owners = new Map();
    for (const it of items) if (it.owner) owners.set(it.owner, (owners.get(it.owner) || 0) + 1);
    const unowned = items.filter((it) => !it.owner).length;
    const members = (r.members || []).map((m) => el("li", null, m + " ", el("span", { class: "muted" }, "(" + (owners.get(m) || 0) + " items)")));
    return [
      el("p", null, (r.members || []).length + " members, " + items.length + " items, " + unowned + " without an owner"),
      el("ul", null, ...members),
      el("table", null,
        el("thead", null, el("tr", null, ...["item", "owner", "token", "waiting"].map((h) => el("th", null, h)))),
        el("tbody", null, ...items.map((it) => el("tr", { "data-item": it.name, "data-owner": it.owner },
          el("td", { class: "text" }, it.name), el("td", { class: "text" }, it.owner || "—"),
          el("td", null, String(it.fencing_token)), el("td", null, String(it.waiting)))))),
    ];
  }

  function groupView(g) {
    return el("table", null,
      el("thead", null, el("tr", null, ...["member", "payload", "session"].map((h) => el("th", null, h)))),
      el("tbody", null, ...g.members.map((m) => el("tr", { "data-member": m.id },
        el("td", { class: "text" }, m.id), el("td", { class: "text" }, bytesText(m.payload)), el("td", null, m.session)))));
  }

  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  // The overview: one row a recipe, with what an operator looks for first.
  function overviewView(o) {
    const head = el("h2", null, "Recipes under " + o.root);
    if (!o.exists) return [head, el("p", { class: "muted" }, "There is no node at " + o.root + " (yet).")];
    const found = el("p", { class: "muted" }, plural(o.recipes.length, "recipe") + " found among " +
      plural(o.examined, "node") + "; each links to its page.");
    const parts = [head, found];
    if (o.capped) parts.push(el("p", { class: "capped", id: "capped" }, "Not all: this page " + o.capped + "."));
    if (!o.recipes.length) return parts;
    parts.push(el("table", { id: "recipes" },
      el("thead", null, el("tr", null, ...["path", "recipe", "who", "for", "details"].map((h) => el("th", null, h)))),
      el("tbody", null, ...o.recipes.map(overviewRow))));
    return parts;
  }

  function overviewRow(r) {
    const attrs = { "data-path": r.path, "data-recipe": r.recipe };
    let who = "", details = "", age = null;
    const q = r.queue, g = r.group, pt = r.partition;
    if (q) {
      const ids = q.holders.map((h) => h.id);
      attrs["data-holders"] = ids.join(",");
      attrs["data-waiting"] = q.waiting;
      const more = q.holding > ids.length ? " and " + (q.holding - ids.length) + " more" : "";
      const verb = r.recipe === "latch" ? "led by " : (r.recipe === "semaphore" || r.recipe === "leases" ? "leases held by " : "held by ");
      who = ids.length ? verb + ids.join(", ") + more : "free: nobody holds it";
      if (q.holders.length) age = q.holders[0].age_seconds;
      details = q.waiting + " waiting" + (q.holders.length ? ", token " + q.holders[0].fencing_token : "");
    } else if (g) {
      attrs["data-members"] = g.members;
      who = plural(g.members, "member");
    } else if (pt) {
      attrs["data-members"] = pt.member_ids.join(",");
      attrs["data-unowned"] = pt.unowned_items.join(",");
      who = plural(pt.members, "member") + (pt.members ? ": " + pt.member_ids.join(", ") : "") +
        (pt.members > pt.member_ids.length ? " and " + (pt.members - pt.member_ids.length) + " more" : "");
      details = plural(pt.items, "item") + ", " + pt.unowned + " without an owner" + (pt.unowned ? ": " + pt.unowned_items.join(", ") : "") +
        (pt.unowned > pt.unowned_items.length ? " and " + (pt.unowned - pt.unowned_items.length) + " more" : "");
    }
    if (r.note) details = r.note;
    return el("tr", attrs,
      el("td", { class: "text" }, el("a", { href: href(r.path) }, r.path)),
      el("td", null, recipeNames[r.recipe] || r.recipe),
      el("td", { class: "text" }, who),
      age === null ? el("td", null) : el("td", { "data-age": age, "data-hold": "1" }),
      el("td", { class: "text" }, details));
  }

  // The timeline is the holders' changes this page has seen at a path since it
  // was opened: ZooKeeper keeps no history of them.
  function timelineView(n) {
    const r = n.recipe;
    if (!r || !r.participants) return [];
    const holders = r.participants.filter((p) => p.state !== "waiting").map((p) => p.id).join(", ") || "nobody";
    let tl = st.timelines.get(n.path);
    if (!tl) { tl = []; st.timelines.set(n.path, tl); }
    if (!tl.length || tl[tl.length - 1].text !== holders) {
      tl.push({ at: new Date(), text: holders });
      if (tl.length > maxTimeline) tl.shift();
    }
    return [el("h2", null, r.recipe === "latch" || r.recipe === "mutex" ? "Leaders and holders seen" : "Holders seen"),
      el("ol", { id: "changes" }, ...tl.map((e) => el("li", { "data-holders": e.text },
        el("span", { class: "muted" }, e.at.toLocaleTimeString() + " "), e.text)))];
  }

  function nodeView(n) {
    if (!n.exists) return [el("h2", null, "No such node"), el("p", { class: "muted" }, n.path + " is not in the copy (it may have been deleted).")];
    const s = n.stat;
    const rows = [["created", s.ctime], ["modified", s.mtime], ["version", s.version], ["children", s.num_children],
      ["data length", s.data_length], ["czxid", s.czxid], ["mzxid", s.mzxid], ["pzxid", s.pzxid], ["ephemeral owner", s.ephemeral_owner]];
    return [el("h2", null, "Node"), el("pre", { id: "data" }, bytesText(n.data)),
      el("table", { class: "stat" }, el("tbody", null, ...rows.map(([k, v]) => el("tr", null, el("th", null, k), el("td", null, String(v))))))];
  }

  function childrenView(n) {
    const c = n.children;
    if (!c.total) return [];
    const items = c.names.map((ch) => el("li", null,
      el("a", { href: href(join(n.path, ch.name)), "data-name": ch.name }, ch.name),
      el("span", { class: "muted" }, (ch.num_children ? " (" + ch.num_children + ")" : "") + (ch.ephemeral ? " ephemeral" : ""))));
    const prev = el("button", { type: "button" }, "previous");
    const next = el("button", { type: "button" }, "next");
    prev.disabled = c.offset === 0;
    next.disabled = c.offset + c.names.length >= c.total;
    prev.addEventListener("click", () => { st.offset = Math.max(0, c.offset - pageSize); load(); });
    next.addEventListener("click", () => { st.offset = c.offset + pageSize; load(); });
    return [el("h2", null, "Children"), el("ul", null, ...items),
      el("div", { class: "pager" }, prev, next,
        el("span", { class: "muted", id: "page" }, (c.offset + 1) + "–" + (c.offset + c.names.length) + " of " + c.total))];
  }

  // tick moves the ages shown, from what the server said at the last read.
  function tick() {
    const since = (Date.now() - st.fetchedAt) / 1000;
    for (const td of document.querySelectorAll("td[data-age]")) {
      const age = Number(td.getAttribute("data-age")) + since;
      td.textContent = duration(age);
      td.parentElement.classList.toggle("long", td.getAttribute("data-hold") === "1" && age > st.holdWarn);
    }
  }

  async function start() {
    try {
      const s = await (await fetch("/api/status")).json();
      st.root = s.root;
      st.holdWarn = s.hold_warn_seconds;
      st.conn = s.connection;
    } catch (e) { /* the stream's error shows it */ }
    window.addEventListener("hashchange", go);
    setInterval(tick, 1000);
    listen();
    go();
  }

  start();
})();
