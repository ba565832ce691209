"use strict";
// Shared pieces of the report's pictures: the decoded data, the time view every plot shares,
// axes, and the memory map (canvas for the buffers, SVG for the few things one clicks).
// Session text only ever reaches the page through textContent (see el()), never as markup.

const D = JSON.parse(document.getElementById("data").textContent);
const PHASE_COLORS = ["#7fa7d9", "#b39ddb", "#f0a23b", "#4caf82"]; // eager prep capture replay
const PHASE_RANK = [0, 1, 3, 2]; // which phase wins a pixel several buffers share
const LEFT = 92, RIGHT = 12, TOP = 6, BOTTOM = 22; // plot margins, CSS px

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  return node;
}
function svgEl(tag, attrs) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  return node;
}
const hex = (n) => "0x" + Math.round(n).toString(16);
const num = (n) => Number(n).toLocaleString("en-US");
const where = (file, line) => (file ? file.split("/").pop() + (line ? ":" + line : "") : "(no call site)");

// The time view: every plot shows seqs [x0, x1).
const firstSeq = D.phaseChanges.length ? D.phaseChanges[0][0] : 0;
const VIEW = { x0: firstSeq - 0.5, x1: D.lastSeq + 1.5, full: [firstSeq - 0.5, D.lastSeq + 1.5] };
const PLOTS = [];
let pending = false;
function redrawAll() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => { pending = false; for (const p of PLOTS) p.draw(); });
}
function zoomX(factor, atFrac) {
  const span = VIEW.x1 - VIEW.x0, full = VIEW.full[1] - VIEW.full[0];
  const next = Math.min(full, Math.max(4, span * factor));
  const at = VIEW.x0 + span * atFrac;
  VIEW.x0 = at - next * atFrac; VIEW.x1 = VIEW.x0 + next;
  clampX(); redrawAll();
}
function panX(dSeq) { VIEW.x0 += dSeq; VIEW.x1 += dSeq; clampX(); redrawAll(); }
function clampX() {
  const span = VIEW.x1 - VIEW.x0;
  if (VIEW.x0 < VIEW.full[0]) { VIEW.x0 = VIEW.full[0]; VIEW.x1 = VIEW.x0 + span; }
  if (VIEW.x1 > VIEW.full[1]) { VIEW.x1 = VIEW.full[1]; VIEW.x0 = VIEW.x1 - span; }
}

function niceTicks(lo, hi, count) {
  const raw = (hi - lo) / Math.max(1, count);
  const mag = Math.pow(10, Math.floor(Math.log10(raw || 1)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) out.push(v);
  return out;
}
function niceHexTicks(lo, hi, count) {
  const raw = (hi - lo) / Math.max(1, count);
  let step = 1;
  while (step < raw) step *= 2;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) out.push(v);
  return out;
}

// A canvas sized to its box at the device's pixel ratio, plus an SVG overlay of the same size.
class Surface {
  constructor(box) {
    this.box = box; this.canvas = box.querySelector("canvas"); this.svg = box.querySelector("svg");
    this.ctx = this.canvas.getContext("2d");
  }
  resize() {
    const r = window.devicePixelRatio || 1, w = this.box.clientWidth, h = this.box.clientHeight;
    if (this.canvas.width !== Math.round(w * r) || this.canvas.height !== Math.round(h * r)) {
      this.canvas.width = Math.round(w * r); this.canvas.height = Math.round(h * r);
    }
    this.ctx.setTransform(r, 0, 0, r, 0, 0);
    this.w = w; this.h = h; this.pw = Math.max(1, w - LEFT - RIGHT);
    this.svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    return this.ctx;
  }
  px(seq) { return LEFT + (seq - VIEW.x0) * this.pw / (VIEW.x1 - VIEW.x0); }
  seqAt(x) { return VIEW.x0 + (x - LEFT) * (VIEW.x1 - VIEW.x0) / this.pw; }
  timeAxis(ctx, y) {
    ctx.fillStyle = "#5f6b7a"; ctx.font = "11px system-ui, sans-serif"; ctx.textAlign = "center";
    for (const t of niceTicks(VIEW.x0, VIEW.x1, Math.floor(this.pw / 110))) {
      const x = this.px(t);
      ctx.fillRect(x, y, 1, 4); ctx.fillText("#" + num(t), x, y + 14);
    }
  }
  // Wheel zooms time around the cursor, drag pans; `extra` gets what is left to a plot.
  wire(extra) {
    let drag = null;
    this.canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      const rect = this.canvas.getBoundingClientRect(), factor = Math.exp(e.deltaY * 0.0015);
      if (e.shiftKey && extra.zoomY) extra.zoomY(factor, (e.clientY - rect.top - TOP) / (this.h - TOP - BOTTOM));
      else zoomX(factor, Math.min(1, Math.max(0, (e.clientX - rect.left - LEFT) / this.pw)));
    }, { passive: false });
    this.canvas.addEventListener("mousedown", (e) => { drag = { x: e.clientX, y: e.clientY, moved: false }; });
    window.addEventListener("mouseup", () => { setTimeout(() => { drag = null; }, 0); });
    this.canvas.addEventListener("mousemove", (e) => {
      if (drag && e.buttons & 1) {
        const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
        if (drag.moved) {
          panX(-dx * (VIEW.x1 - VIEW.x0) / this.pw);
          if (extra.panY) extra.panY(dy);
          drag.x = e.clientX; drag.y = e.clientY; hideTooltip(); return;
        }
      }
      const rect = this.canvas.getBoundingClientRect();
      extra.hover && extra.hover(e.clientX - rect.left, e.clientY - rect.top, e);
    });
    this.canvas.addEventListener("mouseleave", hideTooltip);
    this.canvas.addEventListener("click", (e) => {
      if (drag && drag.moved) return;
      const rect = this.canvas.getBoundingClientRect();
      extra.click && extra.click(e.clientX - rect.left, e.clientY - rect.top);
    });
    this.canvas.addEventListener("dblclick", () => {
      VIEW.x0 = VIEW.full[0]; VIEW.x1 = VIEW.full[1]; extra.fitY && extra.fitY(); redrawAll();
    });
  }
}

const tooltip = document.getElementById("tooltip");
function showTooltip(text, e) {
  tooltip.textContent = text; tooltip.hidden = false;
  const x = Math.min(e.clientX + 14, window.innerWidth - tooltip.offsetWidth - 8);
  const y = e.clientY + 16 + tooltip.offsetHeight > window.innerHeight ? e.clientY - tooltip.offsetHeight - 10 : e.clientY + 16;
  tooltip.style.left = x + "px"; tooltip.style.top = y + "px";
}
function hideTooltip() { tooltip.hidden = true; }
