"use strict";
// zkr ui's page. Without a #fragment it is the overview, /api/overview: every
// recipe under the root; with one, the node it names, /api/node. It reads what it
// shows again whenever /api/events says the copy changed. Every piece is built
// with DOM calls, and every name or datum from ZooKeeper is set as text: nothing
// read from ZooKeeper is ever parsed as markup. Every list comes a page at a
// time (children, a recipe's participants, members and items, the overview's
// recipes), each with its own pager.
//
// The page is opened with zkr ui's token in its URL (?token=...); the answer left
// it in a cookie that every later request carries, so the page takes it out of
// the address bar, where it would be seen, kept in the history or copied along.
(function () {
  if (location.search) history.replaceState(null, "", location.pathname + location.hash);
  const pageSize = 100;
  const maxTimeline = 20;
  const st = {
    root: "/", path: null, node: null, fetchedAt: 0,
    offsets: {}, // where each list's page starts: offset (children or the overview's recipes), participants, members, items
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
      const o = st.offsets;
      const r = await fetch(p === null ? "/api/overview?offset=" + (o.offset || 0) + "&limit=" + pageSize :
        "/api/node?path=" + encodeURIComponent(p) + "&limit=" + pageSize + "&offset=" + (o.offset || 0) +
        "&participants_offset=" + (o.participants || 0) + "&members_offset=" + (o.members || 0) + "&items_offset=" + (o.items || 0));
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
    if (p !== st.path) { st.path = p; st.offsets = {}; }
    load();
  }

  // --- drawing --------------------------------------------------------------

  function render(n) {
    st.node = n;
    st.fetchedAt = Date.now();
    renderCrumbs(n.path);
    $("overview").replaceChildren();
    $("recipe").replaceChildren(...recipeView(n).filter(Boolean)) // a list that fits its page has no pager;
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
    const pages = n.recipe_pages || {};
    switch (r.recipe) {
      case "partition": return [title, ...partitionView(r, pages)];
      case "group": return [title, groupView(r, pages)];
      case "count": case "counter":
        return [title, el("p", { "data-value": r.number }, String(r.number), el("span", { class: "muted" }, " version " + r.version))];
    }
    return [title, queueView(r, pages)];
  }

  // pager is a list's previous and next buttons and where its page is: key names
  // the list's offset in st.offsets, page is {total, offset}, shown how many the
  // page holds.
  function pager(key, page, shown, id) {
    const prev = el("button", { type: "button", "data-list": key, "data-go": "previous" }, "previous");
    const next = el("button", { type: "button", "data-list": key, "data-go": "next" }, "next");
    prev.disabled = page.offset === 0;
    next.disabled = page.offset + shown >= page.total;
    prev.addEventListener("click", () => { st.offsets[key] = Math.max(0, page.offset - pageSize); load(); });
    next.addEventListener("click", () => { st.offsets[key] = page.offset + pageSize; load(); });
    const where = shown ? (page.offset + 1) + "–" + (page.offset + shown) + " of " + page.total : "none of " + page.total;
    return el("div", { class: "pager", "data-list": key }, prev, next, el("span", id ? { class: "muted", id } : { class: "muted" }, where));
  }

  // paged is a list's pager, when the list does not fit one page.
  function paged(key, page, shown) {
    return page && (page.offset > 0 || shown < page.total) ? pager(key, page, shown) : null;
  }

  function queueView(q, pages) {
    const page = pages.participants || { total: q.participants.length, offset: 0 };
    const holding = pages.holding !== undefined ? pages.holding : q.participants.filter((p) => p.state !== "waiting").length;
    const body = q.participants.map((p, i) => {
      const rel = p.node.slice(p.node.lastIndexOf("/") + 1);
      return el("tr", { "data-state": p.state, "data-id": p.id, "data-kind": p.kind },
        el("td", null, String(page.offset + i + 1)), el("td", null, p.state), el("td", null, p.kind),
        el("td", { class: "text" }, p.id), el("td", null, p.session),
        el("td", { "data-age": p.age_seconds, "data-hold": p.state !== "waiting" ? "1" : "0" }),
        el("td", null, String(p.fencing_token)), el("td", { class: "text muted" }, rel));
    });
    return el("div", null,
      el("p", null, holding + " holding, " + (page.total - holding) + " waiting"),
      el("table", null,
        el("thead", null, el("tr", null, ...["#", "state", "kind", "id", "session", "for", "token", "node"].map((h) => el("th", null, h)))),
        el("tbody", null, ...body)),
      paged("participants", pages.participants, q.participants.length));
  }

  // A partition's members and items each come a page at a time; the server counts
  // the items without an owner, and each member's share, over them all.
  function partitionView(r, pages) {
    const items = r.items || [], members = r.members || [];
    const owned = pages.owned || [];
    const memberPage = pages.members || { total: members.length, offset: 0 };
    const itemPage = pages.items || { total: items.length, offset: 0 };
    const unowned = pages.unowned !== undefined ? pages.unowned : items.filter((it) => !it.owner).length;
    return [
      el("p", null, memberPage.total + " members, " + itemPage.total + " items, " + unowned + " without an owner"),
      el("ul", null, ...members.map((m, i) => el("li", null, m + " ", el("span", { class: "muted" }, "(" + (owned[i] || 0) + " items)")))),
      paged("members", pages.members, members.length),
      el("table", null,
        el("thead", null, el("tr", null, ...["item", "owner", "token", "waiting"].map((h) => el("th", null, h)))),
        el("tbody", null, ...items.map((it) => el("tr", { "data-item": it.name, "data-owner": it.owner },
          el("td", { class: "text" }, it.name), el("td", { class: "text" }, it.owner || "—"),
          el("td", null, String(it.fencing_token)), el("td", null, String(it.waiting)))))),
      paged("items", pages.items, items.length),
    ];
  }

  function groupView(g, pages) {
    return el("div", null, el("table", null,
      el("thead", null, el("tr", null, ...["member", "payload", "session"].map((h) => el("th", null, h)))),
      el("tbody", null, ...g.members.map((m) => el("tr", { "data-member": m.id },
        el("td", { class: "text" }, m.id), el("td", { class: "text" }, bytesText(m.payload)), el("td", null, m.session))))),
      paged("members", pages.members, g.members.length));
  }

  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  // The overview: one row a recipe, with what an operator looks for first.
  function overviewView(o) {
    const head = el("h2", null, "Recipes under " + o.root);
    if (!o.exists) return [head, el("p", { class: "muted" }, "There is no node at " + o.root + " (yet).")];
    const total = o.total !== undefined ? o.total : o.recipes.length;
    const found = el("p", { class: "muted" }, plural(total, "recipe") + " found among " +
      plural(o.examined, "node") + "; each links to its page.");
    const parts = [head, found];
    if (o.capped) parts.push(el("p", { class: "capped", id: "capped" }, "Not all: this page " + o.capped + "."));
    if (!o.recipes.length) return parts;
    parts.push(el("table", { id: "recipes" },
      el("thead", null, el("tr", null, ...["path", "recipe", "who", "for", "details"].map((h) => el("th", null, h)))),
      el("tbody", null, ...o.recipes.map(overviewRow))));
    const p = paged("offset", { total, offset: o.offset || 0 }, o.recipes.length);
    if (p) parts.push(p);
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
  // Holders come first in a queue, so the first page of participants has them,
  // or as many as fit: the rest are counted. Another page of participants leaves
  // the timeline as it was.
  function timelineView(n) {
    const r = n.recipe;
    if (!r || !r.participants) return [];
    const pages = n.recipe_pages || {};
    let tl = st.timelines.get(n.path);
    if (pages.participants && pages.participants.offset > 0) return tl ? timelineList(r, tl) : [];
    const ids = r.participants.filter((p) => p.state !== "waiting").map((p) => p.id);
    const more = pages.holding > ids.length ? " and " + (pages.holding - ids.length) + " more" : "";
    const holders = (ids.join(", ") || "nobody") + more;
    if (!tl) { tl = []; st.timelines.set(n.path, tl); }
    if (!tl.length || tl[tl.length - 1].text !== holders) {
      tl.push({ at: new Date(), text: holders });
      if (tl.length > maxTimeline) tl.shift();
    }
    return timelineList(r, tl);
  }

  function timelineList(r, tl) {
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
    return [el("h2", null, "Children"), el("ul", null, ...items), pager("offset", c, c.names.length, "page")];
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
