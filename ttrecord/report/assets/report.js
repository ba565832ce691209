"use strict";
// The page around the pictures: the run's header, the timeline, findings grouped by rule and
// call site, the traces table, and what is selected. Runs after plot.js and memmap.js.

const SELECTED = { finding: null };
const MAPS = [];

function header() {
  const i = D.info, run = document.getElementById("run");
  const took = i.endedAt ? ` in ${(i.endedAt - i.startedAt).toFixed(1)} s` : "";
  const backend = i.backend === "emulator"
    ? "emulator (ttrecord's hardware-free ttnn stand-in: no Tenstorrent device ran this program)"
    : i.backend !== "ttnn" ? "none (no backend ran)"
    : `ttnn${i.ttnnVersion ? " " + i.ttnnVersion : ""} (real device)`;
  const bufferCount = D.maps.reduce((n, m) => n + m.n, 0);
  run.append(
    el("h1", {}, "ttrecord report: ", (i.argv && i.argv.length ? i.argv.join(" ") : i.script)),
    el("div", { class: "facts" },
      el("span", {}, el("span", { class: "status " + i.status, id: "status" }, i.status), i.exitCode !== null ? ` exit code ${i.exitCode}` : "", i.signal ? `, signal ${i.signal}` : "", took),
      el("span", {}, "backend ", el("b", {}, backend), i.backendReason ? `; ${i.backendReason}` : ""),
      el("span", {}, "devices ", el("b", {}, i.devices.map((d) => `${d.label && d.label !== `device ${d.id}` ? d.label : d.id}${d.arch ? " " + d.arch : ""}`).join(", ") || "none"),
        i.devices.length ? ` (${i.devices.map((d) => [d.dramBanks && `${d.dramBanks} DRAM banks`, d.l1Banks && `${d.l1Banks} L1 banks`, d.traceRegion !== null && `trace region ${num(d.traceRegion)} B`].filter(Boolean).join(", ")).join("; ")})` : ""),
      el("span", {}, el("b", {}, num(i.events)), " events, ", el("b", {}, num(bufferCount)), " buffers, ", el("b", {}, num(D.traces.length)), D.traces.length === 1 ? " trace" : " traces"),
      el("span", {}, "session ", el("b", {}, i.path)),
      el("span", {}, `host ${i.host}, python ${i.python}`)));
  if (i.errorType || i.errorMessage) run.append(el("div", { class: "died" }, `${i.errorType || "error"}: ${i.errorMessage || ""}`));
  if (i.nothingToJudge) run.append(el("div", { class: "empty", id: "nothing-to-judge" }, "Nothing to judge: " + i.nothingToJudge));
  if (i.lastCall) run.append(el("div", { class: "died" }, `${i.status === "hung" ? "hung in" : i.status === "crashed" ? "died in" : "last call"} ${i.lastCall.name} at ${where(i.lastCall.file, i.lastCall.line)} (#${i.lastCall.seq})`));
}

// Phase band, then one lane per (device, command queue) with captures and replays.
class Timeline {
  constructor(box) {
    this.s = new Surface(box);
    const lanes = new Map();
    const lane = (d, q) => { const k = `${d}/${q}`; if (!lanes.has(k)) lanes.set(k, { device: d, cq: q, captures: [], replays: [] }); return lanes.get(k); };
    D.traces.forEach((t, ti) => {
      lane(t.device, t.cq).captures.push([t.begin, t.end ?? D.lastSeq, ti]);
      let seq = 0;
      const cq = t.executeCqs.length === 1 ? t.executeCqs[0] : t.cq;
      for (const d of t.executes) { seq += d; lane(t.device, cq).replays.push(seq); }
    });
    for (const dev of D.info.devices) if (![...lanes.values()].some((l) => l.device === dev.id)) lane(dev.id, 0);
    this.lanes = [...lanes.values()].sort((a, b) => a.device - b.device || a.cq - b.cq);
    box.style.height = (TOP + 18 + this.lanes.length * 22 + BOTTOM + 6) + "px";
    this.s.wire(this);
  }
  laneY(k) { return TOP + 18 + k * 22; }
  draw() {
    const s = this.s, ctx = s.resize();
    ctx.clearRect(0, 0, s.w, s.h);
    ctx.font = "11px system-ui, sans-serif"; ctx.textAlign = "right"; ctx.fillStyle = "#5f6b7a";
    ctx.fillText("phase", LEFT - 6, TOP + 11);
    this.lanes.forEach((l, k) => ctx.fillText(`dev ${l.device} cq ${l.cq}`, LEFT - 6, this.laneY(k) + 13));
    ctx.save(); ctx.beginPath(); ctx.rect(LEFT, 0, s.pw, s.h); ctx.clip();
    const ch = D.phaseChanges;
    for (let k = 0; k < ch.length; k++) {
      const x0 = s.px(ch[k][0]), x1 = s.px(k + 1 < ch.length ? ch[k + 1][0] : D.lastSeq + 1);
      if (x1 < LEFT || x0 > LEFT + s.pw) continue;
      ctx.fillStyle = PHASE_COLORS[ch[k][1]]; ctx.fillRect(x0, TOP, Math.max(1, x1 - x0), 14);
    }
    this.lanes.forEach((l, k) => {
      const y = this.laneY(k);
      ctx.fillStyle = "#f1f3f6"; ctx.fillRect(LEFT, y, s.pw, 18);
      ctx.fillStyle = PHASE_COLORS[2];
      for (const [b, e] of l.captures) { const x0 = s.px(b), x1 = s.px(e + 1); if (x1 >= LEFT && x0 <= LEFT + s.pw) ctx.fillRect(x0, y + 2, Math.max(2, x1 - x0), 14); }
      ctx.fillStyle = PHASE_COLORS[3];
      let lastX = -1;
      for (const seq of l.replays) { const x = Math.floor(s.px(seq)); if (x === lastX || x < LEFT - 2 || x > LEFT + s.pw) continue; lastX = x; ctx.fillRect(x, y + 2, Math.max(2, s.px(seq + 1) - x), 14); }
    });
    ctx.restore();
    s.timeAxis(ctx, s.h - BOTTOM);
    this.markers();
  }
  markers() { // a finding at the call it points at, on its device's first lane
    const s = this.s, svg = s.svg;
    svg.replaceChildren();
    const shown = new Set();
    D.findings.forEach((f, fi) => {
      if (f.seq === null) return;
      const x = s.px(f.seq);
      if (x < LEFT || x > LEFT + s.pw) return;
      let k = this.lanes.findIndex((l) => l.device === f.device);
      const y = k < 0 ? TOP + 14 : this.laneY(k) + 18, key = `${Math.round(x)}/${y}`;
      if (shown.has(key)) return;
      shown.add(key);
      const p = svgEl("path", { class: "marker " + f.severity, d: `M${x} ${y - 9} l6 10 h-12 z`, "data-finding": fi });
      p.addEventListener("click", () => selectFinding(fi));
      p.addEventListener("mousemove", (e) => showTooltip(`${f.rule} ${f.title}\n${where(f.file, f.line)} (#${f.seq})`, e));
      p.addEventListener("mouseleave", hideTooltip);
      svg.append(p);
    });
  }
  hover(x, y, e) {
    const seq = Math.round(this.s.seqAt(x));
    if (x < LEFT) return hideTooltip();
    const k = Math.floor((y - TOP - 18) / 22);
    const l = this.lanes[k];
    if (l) {
      const c = l.captures.find(([b, end]) => b <= seq && seq <= end);
      if (c) { const t = D.traces[c[2]]; return showTooltip(`trace ${t.id} captured #${num(t.begin)}–#${num(t.end ?? D.lastSeq)}: ${t.ops} ops, ${num(t.executes.length)} replays`, e); }
    }
    let p = 0;
    for (const [at, ph] of D.phaseChanges) { if (at > seq) break; p = ph; }
    showTooltip(`#${num(seq)}: ${D.phases[p]}`, e);
  }
}

function findings() {
  const box = document.getElementById("findings");
  if (D.changedOnDisk) box.append(el("p", { class: "changed" }, D.changedOnDisk));
  if (!D.findings.length) { box.append(el("p", { class: "none" }, D.info.nothingToJudge ? "Nothing to judge: " + D.info.nothingToJudge : "No trace hazards found.")); return; }
  const byRule = new Map();
  D.findings.forEach((f, fi) => {
    if (!byRule.has(f.rule)) byRule.set(f.rule, new Map());
    const sites = byRule.get(f.rule), key = `${f.file}:${f.line}`;
    if (!sites.has(key)) sites.set(key, []);
    sites.get(key).push(fi);
  });
  for (const [rule, sites] of byRule) {
    const all = [...sites.values()].flat(), first = D.findings[all[0]];
    const group = el("div", { class: "finding-group", "data-rule": rule },
      el("h3", {}, el("span", { class: "sev " + first.severity }, first.severity), `${rule} ${first.title} `, el("span", { class: "count" }, `${all.length} finding${all.length > 1 ? "s" : ""} at ${sites.size} call site${sites.size > 1 ? "s" : ""}`)));
    for (const ids of sites.values()) group.append(findingView(ids));
    box.append(group);
  }
}

function findingView(ids) {
  const f = D.findings[ids[0]];
  const node = el("div", { class: "finding", id: "finding-" + ids[0], "data-findings": ids.join(" ") },
    el("span", { class: "where", title: f.file || "", onclick: () => selectFinding(ids[0]) }, `${where(f.file, f.line)}${f.function ? " in " + f.function : ""}`),
    ids.length > 1 ? el("span", { class: "count" }, `${ids.length} times`) : null);
  // What to do first: the line to change, the calls down to the ttnn call (each one click
  // away from its recorded source), the fix; then what happened and the evidence.
  const excerptOf = (frame) => el("pre", { class: "excerpt" }, ...frame.excerpt.map(([n, text]) => el("span", { class: n === frame.line ? "hit" : "" }, `${String(n).padStart(5)} | ${text}`)));
  const chain = f.chain && f.chain.length ? f.chain : [{ lead: "", file: f.file, line: f.line, function: f.function, excerpt: f.excerpt }];
  let shown = chain[0].excerpt.length ? excerptOf(chain[0]) : null;
  const frames = chain.map((frame, k) => {
    const link = el("a", { class: "frame-link", href: "#", title: frame.file || "", "data-frame": k },
      `${where(frame.file, frame.line)}${frame.function ? " in " + frame.function : ""}`);
    link.addEventListener("click", (e) => {
      e.preventDefault();
      const next = excerptOf(frame);
      if (shown) shown.replaceWith(next); else frames[frames.length - 1].after(next);
      shown = next;
      frames.forEach((n) => n.classList.toggle("current", n === row));
    });
    const row = el("div", { class: "frame" + (k === 0 ? " current" : "") }, frame.lead ? el("span", { class: "lead" }, frame.lead + " ") : null, link);
    return row;
  });
  if (f.keepGoing) node.append(el("div", { class: "keep-going" }, `seen in keep-going mode: real ttnn stops here with TT_FATAL "${f.keepGoing}"`));
  if (chain.length > 1) node.append(...frames.slice(0, 1));
  if (shown) node.append(shown);
  if (chain.length > 1) node.append(...frames.slice(1));
  node.append(el("div", { class: "fix" }, el("b", {}, "fix: "), f.fix), el("div", { class: "message" }, f.message));
  if (f.evidence.length) node.append(el("dl", { class: "evidence" }, ...f.evidence.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])));
  return node;
}

function driveSection() {
  const box = document.getElementById("drive");
  if (!D.drive || !D.drive.length) { box.append(el("p", {}, "No capture ended: nothing to replay.")); return; }
  const tensor = (t) => el("li", {}, el("code", {}, t.name || "(unnamed)"), ` [${t.shape.join(", ")}] ${t.dtype}`, t.file ? " at " : "", t.file ? el("span", { class: "where", title: t.file }, where(t.file, t.line)) : "");
  for (const p of D.drive) {
    box.append(el("div", { class: "drive", "data-trace": p.trace_id },
      el("h3", {}, `trace ${p.trace_id} (device ${p.device}, captured at ${p.captured})`),
      el("div", {}, "Copy new data into these captured inputs before each replay:"),
      el("ul", {}, ...(p.inputs.length ? p.inputs.map(tensor) : [el("li", {}, "none")])),
      el("div", {}, "Read these outputs after it:"),
      el("ul", {}, ...(p.outputs.length ? p.outputs.map(tensor) : [el("li", {}, "none")])),
      el("pre", { class: "snippet" }, p.snippet)));
  }
}

function tracesTable() {
  const box = document.getElementById("traces");
  if (!D.traces.length) { box.append(el("p", {}, "No trace was captured.")); return; }
  const rows = D.traces.slice(0, 500).map((t) => el("tr", {},
    el("td", {}, t.device), el("td", {}, t.id), el("td", {}, t.cq), el("td", {}, `#${num(t.begin)}`),
    el("td", {}, t.end === null ? "never ended" : `#${num(t.end)}`), el("td", {}, t.ops), el("td", {}, num(t.executes.length)),
    el("td", { class: "l" }, t.release ? `released at #${num(t.release)}` : t.end === null ? "never ended" : "not released")));
  box.append(el("table", {}, el("tr", {}, ...["device", "trace", "cq", "capture begins", "ends", "ops", "replays", "state"].map((h) => el("th", {}, h))), ...rows));
  if (D.traces.length > 500) box.append(el("p", {}, `… and ${num(D.traces.length - 500)} more traces.`));
}

function selectFinding(fi, hazard) {
  const f = D.findings[fi];
  SELECTED.finding = fi;
  document.querySelectorAll(".finding.selected").forEach((n) => n.classList.remove("selected"));
  const item = [...document.querySelectorAll(".finding")].find((n) => n.dataset.findings.split(" ").includes(String(fi)));
  if (item) item.classList.add("selected");
  const panel = document.getElementById("selection");
  panel.replaceChildren(
    el("button", { class: "close", title: "close", onclick: () => { panel.hidden = true; SELECTED.finding = null; redrawAll(); } }, "×"),
    el("div", {}, el("span", { class: "sev " + f.severity }, f.severity), el("b", { class: "rule" }, f.rule), ` ${f.title} `, el("span", { class: "where" }, where(f.file, f.line))),
    el("div", { class: "message" }, f.message), el("div", { class: "fix" }, el("b", {}, "fix: "), f.fix));
  const hz = hazard || D.hazards.find((h) => h.f === fi);
  if (hz) {
    const map = MAPS[hz.m];
    panel.append(el("pre", {}, map.describe(hz.i)));
    if (!hazard) map.focus(hz.i);
  }
  if (item) panel.append(el("a", { href: "#" + item.id }, "go to the finding"));
  panel.hidden = false; panel.dataset.finding = fi;
  redrawAll();
}

function selectBuffer(map, i) {
  const panel = document.getElementById("selection");
  SELECTED.finding = null;
  panel.replaceChildren(el("button", { class: "close", onclick: () => { panel.hidden = true; } }, "×"), el("pre", {}, map.describe(i)));
  panel.hidden = false; delete panel.dataset.finding;
  redrawAll();
}

function legend() {
  const box = document.getElementById("legend");
  D.phases.forEach((p, k) => box.append(el("span", { style: `--c:${PHASE_COLORS[k]}` }, `allocated in ${p}`)));
  box.append(el("span", { style: "--c:rgba(142,36,170,.25);--b:1px dashed #8e24aa" }, "a trace writes (capture to release)"),
    el("span", { style: "--c:rgba(30,136,229,.2);--b:1px dashed #1e88e5" }, "a trace reads"),
    el("span", { style: "--c:rgba(211,47,47,.15);--b:2px solid #d32f2f" }, "hazard (click for the finding)"));
}

function main() {
  header();
  PLOTS.push(new Timeline(document.getElementById("timeline")));
  legend();
  const mapsBox = document.getElementById("maps");
  D.hazards.forEach((h, k) => { h.index = k; });
  const onBuffers = new Set(D.hazards.map((h) => h.f)), lined = new Set();
  for (const m of D.maps) {
    const plot = el("div", { class: "plot", "data-device": m.device, "data-type": m.type });
    plot.innerHTML = "<canvas></canvas><svg class=\"overlay\"></svg>"; // fixed markup, no session text
    const toggle = el("button", { class: "scale", title: "compact gives small buffers room next to big ones; linear keeps addresses to scale" });
    const dev = D.info.devices.find((d) => d.id === m.device); // a mesh's map is each of its chips' map
    mapsBox.append(el("div", { class: "map" }, el("h3", {}, `${dev && dev.label ? dev.label : `device ${m.device}`} · ${m.type} `, el("small", {}, `${num(m.n)} buffers, [${hex(m.lo)}, ${hex(m.hi)}) per bank `), toggle), plot));
    // Findings about a call rather than a buffer: a line at the call, on the device's first map.
    const lines = lined.has(m.device) ? [] : D.findings.flatMap((f, fi) =>
      !onBuffers.has(fi) && f.seq !== null && (f.device === m.device || f.device === null) ? [fi] : []).slice(0, 20000);
    lined.add(m.device);
    const map = new MemoryMap(m, plot, D.hazards.filter((h) => h.m === m.index), lines);
    map.toggle = toggle; map.label();
    toggle.addEventListener("click", () => { map.setScale(!map.scale.compact); map.draw(); });
    MAPS.push(map); PLOTS.push(map);
  }
  if (!D.maps.length) mapsBox.append(el("p", {}, "No device buffers were recorded."));
  findings();
  tracesTable();
  driveSection();
  for (const p of PLOTS) p.draw();
  window.addEventListener("resize", redrawAll);
  document.documentElement.dataset.readyMs = Math.round(performance.now());
  document.documentElement.dataset.ready = "1";
}
main();
