"use strict";
// The memory map of one (device, memory kind): every buffer a rectangle from its allocation
// to its free (time, x) over its bank-local address range (y), coloured by the phase that
// allocated it; the trace ranges shaded behind; hazards outlined in SVG so they can be clicked.
//
// A million-event run has ~300,000 buffers and most are thinner than a pixel when the whole
// run is in view. Those are aggregated: each marks the pixels it covers in a bitmask per phase
// and the mask is painted once, so a redraw costs one pass over the buffers, not one canvas
// call each. Buffers wider and taller than a pixel are drawn as rectangles.

class MemoryMap {
  constructor(m, box, hazards, lines) {
    this.m = m; this.s = new Surface(box); this.hazards = hazards;
    this.lines = lines; // [finding index] of findings about a call, not a buffer: a line at it
    const n = m.n;
    this.a = new Float64Array(n); this.f = new Float64Array(n);
    let seq = 0;
    for (let i = 0; i < n; i++) {
      seq += m.alloc[i]; this.a[i] = seq;
      this.f[i] = m.life[i] < 0 ? D.lastSeq + 1 : Math.max(seq + m.life[i], seq + 1);
    }
    this.ranges = D.ranges.filter((r) => r.m === m.index);
    const bounds = new Set();
    for (let i = 0; i < n; i++) { bounds.add(m.addr[i]); bounds.add(m.addr[i] + m.size[i]); }
    for (const r of this.ranges) { bounds.add(r.a - m.lo); bounds.add(r.e - m.lo); }
    this.bounds = Float64Array.from(bounds).sort();
    // Linear hides small buffers next to big ones; start compact when that would happen.
    const sizes = Float64Array.from(m.size).sort(), median = sizes[sizes.length >> 1] || 1;
    this.setScale((m.hi - m.lo) / median > 32);
    this.s.wire(this);
  }
  // Buffers and ranges in display units: bank-local address relative to the map's lowest,
  // through the scale (the identity when linear).
  setScale(compact) {
    const m = this.m, sc = this.scale = new AddressScale(this.bounds, compact);
    this.lo = new Float64Array(m.n); this.hi = new Float64Array(m.n);
    for (let i = 0; i < m.n; i++) { this.lo[i] = sc.d(m.addr[i]); this.hi[i] = sc.d(m.addr[i] + m.size[i]); }
    for (const r of this.ranges) { r.dlo = sc.d(r.a - m.lo); r.dhi = sc.d(r.e - m.lo); }
    this.fitY();
    this.label();
  }
  label() { if (this.toggle) this.toggle.textContent = `address scale: ${this.scale.compact ? "compact" : "linear"}`; }
  fitY() { const t = this.scale.total, pad = Math.max(1, t * 0.03); this.y0 = -pad; this.y1 = t + pad; }
  get ph() { return Math.max(1, this.s.h - TOP - BOTTOM); }
  py(addr) { return TOP + this.ph - (addr - this.y0) * this.ph / (this.y1 - this.y0); }
  addrAt(y) { return this.y0 + (TOP + this.ph - y) * (this.y1 - this.y0) / this.ph; }
  zoomY(factor, frac) {
    const span = this.y1 - this.y0, next = Math.max(this.scale.total * 1e-6, span * factor), at = this.y1 - span * frac;
    const f = (this.y1 - at) / span; this.y1 = at + next * f; this.y0 = this.y1 - next; this.draw();
  }
  panY(dy) { const d = dy * (this.y1 - this.y0) / this.ph; this.y0 += d; this.y1 += d; this.draw(); }

  draw() {
    const s = this.s, ctx = s.resize(), m = this.m, pw = s.pw, ph = this.ph;
    ctx.clearRect(0, 0, s.w, s.h);
    ctx.save(); ctx.beginPath(); ctx.rect(LEFT, TOP, pw, ph); ctx.clip();
    ctx.fillStyle = "#fbfcfd"; ctx.fillRect(LEFT, TOP, pw, ph);
    for (const r of this.ranges) { // the trace's ranges, owned from capture to release
      const x0 = s.px(r.from), x1 = s.px(r.until), y0 = this.py(r.dhi), y1 = this.py(r.dlo);
      if (x1 < LEFT || x0 > LEFT + pw || y1 < TOP || y0 > TOP + ph) continue;
      ctx.fillStyle = r.w ? "rgba(142, 36, 170, 0.16)" : "rgba(30, 136, 229, 0.13)";
      ctx.fillRect(x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0));
    }
    const W = Math.ceil(pw), H = Math.ceil(ph), mask = new Uint8Array(W * H);
    const kx = pw / (VIEW.x1 - VIEW.x0), ky = ph / (this.y1 - this.y0);
    const rects = [[], [], [], []];
    let drawn = 0;
    for (let i = 0; i < m.n; i++) {
      const x0 = (this.a[i] - VIEW.x0) * kx, x1 = (this.f[i] - VIEW.x0) * kx;
      if (x1 < 0 || x0 >= W) continue;
      const top = (this.y1 - this.hi[i]) * ky, bottom = (this.y1 - this.lo[i]) * ky;
      if (bottom < 0 || top >= H) continue;
      drawn++;
      if (x1 - x0 >= 1.5 && bottom - top >= 1.5) { rects[m.phase[i]].push(i); continue; }
      const bit = 1 << m.phase[i]; // thinner than a pixel one way: mark the pixels it covers
      const c0 = Math.max(0, Math.floor(x0)), c1 = Math.min(W - 1, Math.max(c0, Math.ceil(x1) - 1));
      const r0 = Math.max(0, Math.floor(top)), r1 = Math.min(H - 1, Math.max(r0, Math.ceil(bottom) - 1));
      for (let r = r0; r <= r1; r++) for (let c = c0, o = r * W; c <= c1; c++) mask[o + c] |= bit;
    }
    this.paintMask(ctx, mask, W, H);
    for (const p of [0, 1, 3, 2]) {
      if (!rects[p].length) continue;
      ctx.fillStyle = PHASE_COLORS[p]; ctx.strokeStyle = "rgba(0,0,0,0.35)"; ctx.lineWidth = 0.6;
      ctx.beginPath();
      for (const i of rects[p]) {
        const x0 = s.px(this.a[i]), x1 = s.px(this.f[i]), y0 = this.py(this.hi[i]), y1 = this.py(this.lo[i]);
        ctx.rect(x0, y0, x1 - x0, y1 - y0);
      }
      ctx.fill(); ctx.stroke();
    }
    for (const r of this.ranges) { // range outlines over the buffers, so overlaps show
      const x0 = s.px(r.from), x1 = s.px(r.until), y0 = this.py(r.dhi), y1 = this.py(r.dlo);
      if (x1 < LEFT || x0 > LEFT + pw || y1 < TOP || y0 > TOP + ph || y1 - y0 < 3 || x1 - x0 < 3) continue;
      ctx.strokeStyle = r.w ? "rgba(142, 36, 170, 0.7)" : "rgba(30, 136, 229, 0.7)"; ctx.lineWidth = 1;
      ctx.setLineDash([4, 3]); ctx.strokeRect(x0, y0, x1 - x0, y1 - y0); ctx.setLineDash([]);
    }
    ctx.restore();
    this.axes(ctx);
    this.s.box.dataset.drawn = drawn;
    this.drawHazards();
  }

  paintMask(ctx, mask, W, H) {
    const colors = PHASE_COLORS.map((c) => [1, 3, 5].map((k) => parseInt(c.slice(k, k + 2), 16)));
    const img = new ImageData(W, H), px = img.data;
    let any = false;
    for (let o = 0; o < mask.length; o++) {
      const bits = mask[o];
      if (!bits) continue;
      any = true;
      let best = -1;
      for (let p = 0; p < 4; p++) if (bits & (1 << p) && (best < 0 || PHASE_RANK[p] > PHASE_RANK[best])) best = p;
      const c = colors[best], q = o * 4;
      px[q] = c[0]; px[q + 1] = c[1]; px[q + 2] = c[2]; px[q + 3] = 255;
    }
    if (!any) return;
    const off = this.off || (this.off = document.createElement("canvas"));
    off.width = W; off.height = H; off.getContext("2d").putImageData(img, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(off, LEFT, TOP, W, H);
  }

  axes(ctx) {
    const s = this.s, m = this.m;
    ctx.fillStyle = "#5f6b7a"; ctx.font = "11px ui-monospace, Menlo, monospace"; ctx.textAlign = "right";
    for (const t of this.scale.ticks(this.y0, this.y1, Math.floor(this.ph / 40))) {
      const y = this.py(this.scale.d(t)), label = hex(m.lo + t);
      if (y < TOP - 1 || y > TOP + this.ph + 1) continue;
      ctx.fillRect(LEFT - 4, y, 4, 1); ctx.fillText(label, LEFT - 6, y + 4);
    }
    ctx.font = "11px system-ui, sans-serif";
    s.timeAxis(ctx, TOP + this.ph);
  }

  drawHazards() {
    const s = this.s, svg = s.svg, m = this.m;
    svg.replaceChildren();
    // One marker per 8 px; the lines too only while few enough to read the map through.
    const shown = new Map();
    for (const fi of this.lines) {
      const x = s.px(D.findings[fi].seq + 0.5), key = Math.round(x / 8);
      if (x >= LEFT && x <= LEFT + s.pw && !shown.has(key)) shown.set(key, [fi, x]);
    }
    for (const [fi, x] of shown.values()) {
      const f = D.findings[fi];
      if (shown.size <= 40) svg.append(svgEl("line", { class: "finding-line " + f.severity, x1: x, x2: x, y1: TOP, y2: TOP + this.ph }));
      const p = svgEl("path", { class: "marker " + f.severity, d: `M${x - 6} ${TOP} h12 l-6 10 z`, "data-finding": fi });
      p.addEventListener("click", () => selectFinding(fi));
      p.addEventListener("mousemove", (e) => showTooltip(`${f.rule} ${f.title}\n${where(f.file, f.line)} (#${f.seq})`, e));
      p.addEventListener("mouseleave", hideTooltip);
      svg.append(p);
    }
    for (const h of this.hazards) {
      const x0 = s.px(this.a[h.i]), x1 = s.px(this.f[h.i]);
      const y0 = this.py(this.hi[h.i]), y1 = this.py(this.lo[h.i]);
      for (const ri of h.ranges) {
        const r = D.ranges[ri];
        const box = clampBox(s.px(r.from), this.py(r.dhi), s.px(r.until), this.py(r.dlo), 2, s, this.ph);
        if (box) svg.append(svgEl("rect", { class: "trace-range", "data-hazard": h.index, "data-trace": r.t, "data-role": r.w ? "writes" : "reads", ...box }));
      }
      const box = clampBox(x0, y0, x1, y1, 10, s, this.ph);
      if (!box) continue;
      const f = D.findings[h.f];
      const rect = svgEl("rect", { class: "hazard" + (SELECTED.finding === h.f ? " selected" : ""), "data-finding": h.f, "data-rule": f.rule, "data-hazard": h.index, ...box });
      rect.addEventListener("click", (e) => { e.stopPropagation(); selectFinding(h.f, h); });
      rect.addEventListener("mousemove", (e) => showTooltip(`${f.rule} ${f.title} (click for the finding)\n${this.describe(h.i)}`, e));
      rect.addEventListener("mouseleave", hideTooltip);
      svg.append(rect);
    }
  }

  // The buffer under a point: the last allocated one there, with a pixel or two of slack.
  bufferAt(x, y) {
    const m = this.m, seq = this.s.seqAt(x), addr = this.addrAt(y) ;
    const slackX = 2 * (VIEW.x1 - VIEW.x0) / this.s.pw, slackY = 2 * (this.y1 - this.y0) / this.ph;
    for (let i = m.n - 1; i >= 0; i--) {
      if (this.a[i] - slackX <= seq && seq < this.f[i] + slackX && this.lo[i] - slackY <= addr && addr < this.hi[i] + slackY) return i;
    }
    return -1;
  }
  rangeAt(x, y) {
    const seq = this.s.seqAt(x), addr = this.addrAt(y);
    return this.ranges.find((r) => r.from <= seq && seq < r.until && r.dlo <= addr && addr < r.dhi);
  }
  describe(i) {
    const m = this.m, [name, file, line, func, tensor, total] = D.sites[m.origin[i]];
    const address = m.lo + m.addr[i], life = m.life[i];
    const lines = [
      `${name || "allocation"} at ${where(file, line)}${func ? " in " + func : ""}`,
      `${m.type} [${hex(address)}, ${hex(address + m.size[i])}) ${num(m.size[i])} B per bank` + (total ? `, ${num(total)} B in all` : ""),
      (m.tensor[i] >= 0 ? `tensor #${m.tensor[i]}` : "no tensor id") + (tensor ? ` ${tensor}` : ""),
      `allocated at #${num(this.a[i])} (${D.phases[m.phase[i]]}), ` + (life < 0 ? "never freed" : `freed at #${num(this.a[i] + life)}`),
    ];
    return lines.join("\n");
  }
  hover(x, y, e) {
    if (x < LEFT) return hideTooltip();
    const i = this.bufferAt(x, y);
    if (i >= 0) return showTooltip(this.describe(i), e);
    const r = this.rangeAt(x, y);
    if (r) {
      const t = D.traces[r.t];
      return showTooltip(`trace ${t.id} on device ${t.device} ${r.w ? "writes" : "reads"} [${hex(r.a)}, ${hex(r.e)}) on every replay\ncaptured #${num(t.begin)}–#${num(t.end ?? t.begin)}, ` + (t.release ? `released at #${num(t.release)}` : "never released"), e);
    }
    hideTooltip();
  }
  click(x, y) {
    const i = this.bufferAt(x, y);
    if (i < 0) return;
    const h = this.hazards.find((h) => h.i === i);
    if (h) selectFinding(h.f, h); else selectBuffer(this, i);
  }
  // Bring a buffer into view (from a finding's "show in map").
  focus(i) {
    const life = this.f[i] - this.a[i], pad = Math.max(20, life * 2);
    VIEW.x0 = this.a[i] - pad; VIEW.x1 = this.f[i] + pad; clampX();
    const span = Math.max((this.hi[i] - this.lo[i]) * 12, this.scale.total * 1e-4);
    this.y0 = (this.lo[i] + this.hi[i]) / 2 - span / 2; this.y1 = this.y0 + span;
    redrawAll();
  }
}

// A rectangle clipped to the plot, at least `min` px each way (so a one-seq hazard is
// still something to click); null when outside the plot.
function clampBox(x0, y0, x1, y1, min, s, ph) {
  if (x1 < LEFT || x0 > LEFT + s.pw || y1 < TOP || y0 > TOP + ph) return null;
  x0 = Math.max(LEFT, x0); x1 = Math.min(LEFT + s.pw, x1); y0 = Math.max(TOP, y0); y1 = Math.min(TOP + ph, y1);
  if (x1 - x0 < min) { const c = (x0 + x1) / 2; x0 = c - min / 2; x1 = c + min / 2; }
  if (y1 - y0 < min) { const c = (y0 + y1) / 2; y0 = c - min / 2; y1 = c + min / 2; }
  return { x: x0.toFixed(1), y: y0.toFixed(1), width: (x1 - x0).toFixed(1), height: (y1 - y0).toFixed(1) };
}

// Bank-local address (relative to the map's lowest) -> display units. Linear is the identity;
// compact gives every span between two buffer boundaries a height growing with the square
// root of its size, so a 2 KB buffer next to a 256 MB one is still a visible band, and no span
// taller than 16 median spans (kernel binaries sit at the top of DRAM, gigabytes above the
// tensors: that gap must not flatten everything else).
class AddressScale {
  constructor(bounds, compact) {
    this.compact = compact;
    this.b = bounds.length ? bounds : Float64Array.of(0, 1);
    this.p = new Float64Array(this.b.length);
    const roots = [];
    for (let k = 1; k < this.b.length; k++) roots.push(Math.sqrt(this.b[k] - this.b[k - 1]));
    const sorted = roots.filter((r) => r > 0).sort((a, b) => a - b);
    const cap = sorted.length ? 16 * sorted[sorted.length >> 1] : Infinity;
    for (let k = 1; k < this.b.length; k++) {
      const len = this.b[k] - this.b[k - 1];
      this.p[k] = this.p[k - 1] + (compact ? Math.min(roots[k - 1], cap) : len);
    }
  }
  get total() { return this.p[this.p.length - 1] || 1; }
  static find(arr, x) { // last k with arr[k] <= x (0 when x is below all)
    let lo = 0, hi = arr.length - 1;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (arr[mid] <= x) lo = mid; else hi = mid - 1; }
    return lo;
  }
  d(x) {
    if (!this.compact) return x - this.b[0];
    const b = this.b, p = this.p, k = Math.min(AddressScale.find(b, x), b.length - 2);
    const len = b[k + 1] - b[k];
    return p[k] + (len > 0 ? (x - b[k]) * (p[k + 1] - p[k]) / len : 0);
  }
  inv(y) {
    if (!this.compact) return y + this.b[0];
    const b = this.b, p = this.p, k = Math.min(AddressScale.find(p, y), p.length - 2);
    const h = p[k + 1] - p[k];
    return b[k] + (h > 0 ? (y - p[k]) * (b[k + 1] - b[k]) / h : 0);
  }
  // Addresses to label between display positions y0 and y1, about `count` of them.
  ticks(y0, y1, count) {
    const lo = this.inv(Math.max(y0, 0)), hi = this.inv(Math.min(y1, this.total));
    if (!this.compact) return niceHexTicks(lo, hi, count);
    const gap = (y1 - y0) / Math.max(1, count), out = [];
    let last = -Infinity;
    for (let k = AddressScale.find(this.b, lo); k < this.b.length && this.b[k] <= hi; k++) {
      if (this.p[k] - last >= gap) { out.push(this.b[k]); last = this.p[k]; }
    }
    return out;
  }
}
