// The sample viewer's drawing (included before viewer.js, in the same script): the cell geometry of the release, the
// true grid with its outlines, the answer with gridlines, the wrong-cell marks and the patch grid, on canvases drawn
// at the device's pixel ratio with every cell edge on a whole device pixel. g2mDrawing(D, PALETTE, OUTLINE, $): the
// functions viewer.js calls; the toggles (#t-wrong, #t-patch, #t-size) are read at each drawing.
function g2mDrawing(D, PALETTE, OUTLINE, $) {
  'use strict';
  var S = D.image_size || 512, MAX_CSS = 384;
  var PATCH_DARK = 'rgba(0,0,0,0.6)', PATCH_LIGHT = 'rgba(0,229,255,0.85)';  // the patch grid: see-through

  // ---- geometry -----------------------------------------------------------------------------------------------
  function boundsOf(n) {
    var b = D.bounds && D.bounds[String(n)];
    if (Array.isArray(b) && b.length === n + 1) { return b; }
    var eq = [];
    for (var j = 0; j <= n; j++) { eq.push(j * S / n); }  // not in the index: equal cells over the whole image
    return eq;
  }
  function edges(n, w) {  // cell edges in backing-store pixels, on whole pixels
    return boundsOf(n).map(function (x) { return Math.round(x * w / S); });
  }
  function sizeCanvas(cv) {
    var dpr = window.devicePixelRatio || 1, box = cv.parentElement;
    var css = Math.max(96, Math.min(MAX_CSS, Math.floor(box.clientWidth - 2)));  // 2: the border
    var px = Math.floor(css * dpr), w = (px / dpr) + 'px';  // a whole number of device pixels
    if (cv.style.width !== w) { cv.style.width = cv.style.height = w; }
    if (cv.width !== px) { cv.width = px; cv.height = px; }
    var ctx = cv.getContext('2d');
    ctx.imageSmoothingEnabled = false;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.setLineDash([]);
    return ctx;
  }
  var hatch = null, hatchFor = 0;
  function hatchPattern(ctx) {
    var dpr = window.devicePixelRatio || 1;
    if (!hatch || hatchFor !== dpr) {
      var p = Math.max(4, Math.round(5 * dpr)), t = document.createElement('canvas');
      t.width = t.height = p;
      var c = t.getContext('2d');
      c.fillStyle = '#b4b4b4';
      c.fillRect(0, 0, p, p);
      c.strokeStyle = '#555';
      c.lineWidth = Math.max(1, Math.round(dpr));
      c.beginPath();
      c.moveTo(-1, p + 1); c.lineTo(p + 1, -1);
      c.moveTo(-1, 1); c.lineTo(1, -1);
      c.moveTo(p - 1, p + 1); c.lineTo(p + 1, p - 1);
      c.stroke();
      hatch = t;
      hatchFor = dpr;
    }
    return ctx.createPattern(hatch, 'repeat');
  }
  function frame(ctx, x0, y0, x1, y1, lw) {  // a rectangle's inner border of lw pixels, with fills (crisp)
    ctx.fillRect(x0, y0, x1 - x0, lw);
    ctx.fillRect(x0, y1 - lw, x1 - x0, lw);
    ctx.fillRect(x0, y0 + lw, lw, y1 - y0 - 2 * lw);
    ctx.fillRect(x1 - lw, y0 + lw, lw, y1 - y0 - 2 * lw);
  }
  // the patch grid: a dark line beside a bright cyan one at every patch edge, each one device pixel (at least) and
  // see-through, so that it shows on every colour of the palette and on the outlines and hides none of the image
  function patchLines(ctx, w) {
    var size = Number($('t-size').value);
    if (!(size >= 2)) { return; }
    var lw = Math.max(1, Math.round(window.devicePixelRatio || 1));
    for (var x = size; x < S; x += size) {
      var p = Math.round(x * w / S);
      ctx.fillStyle = PATCH_DARK;
      ctx.fillRect(p - lw, 0, lw, w);
      ctx.fillRect(0, p - lw, w, lw);
      ctx.fillStyle = PATCH_LIGHT;
      ctx.fillRect(p, 0, lw, w);
      ctx.fillRect(0, p, w, lw);
    }
  }
  // each cell's grey outline, as the release draws it: its width in the image's pixels scaled down to whole pixels,
  // at least 1 (never thicker than the image's, so that a 64 x 64 cell keeps its colour)
  function outlineWidth(n, w) { return Math.max(1, Math.floor(((D.outline && D.outline[String(n)]) || 1) * w / S)); }
  function outlines(ctx, n, e, w) {
    var olw = outlineWidth(n, w);
    ctx.fillStyle = OUTLINE;
    for (var r = 0; r < n; r++) {
      for (var c = 0; c < n; c++) {
        if (Math.min(e[c + 1] - e[c], e[r + 1] - e[r]) > 2 * olw + 1) { frame(ctx, e[c], e[r], e[c + 1], e[r + 1], olw); }
      }
    }
  }
  // the answer's gridlines: one line of that width on every cell edge (half the grey between two cells of the image:
  // thin, and two neighbours of one colour stay two cells), left out between two missing cells (dashed, drawn after)
  function gridlines(ctx, n, e, w, skip) {
    var lw = outlineWidth(n, w), h = Math.floor(lw / 2), r, j;
    function at(x) { return Math.max(0, Math.min(w - lw, x - h)); }
    ctx.fillStyle = OUTLINE;
    for (r = 0; r < n; r++) {
      for (j = 0; j <= n; j++) {
        if ((j > 0 && !skip[r * n + j - 1]) || (j < n && !skip[r * n + j])) { ctx.fillRect(at(e[j]), e[r], lw, e[r + 1] - e[r]); }
        if ((j > 0 && !skip[(j - 1) * n + r]) || (j < n && !skip[j * n + r])) { ctx.fillRect(e[r], at(e[j]), e[r + 1] - e[r], lw); }
      }
    }
  }
  // wrong cells: while cells are large (N <= FRAME_MAX_N, and room for it), a red frame with a white line inside
  // (seen on a red cell too); on a larger grid a small red corner (a triangle a third of the cell wide at most), so that
  // a grid of mostly wrong cells still shows its colours, white on a cell whose colour is near the mark's (the
  // palette's red lies 112 from it in RGB: a red corner there hardly shows)
  var FRAME_MAX_N = 16, WRONG = '#e00000', NEAR = 150;
  function rgb(hex) { var v = parseInt(String(hex).slice(1), 16); return [v >> 16 & 255, v >> 8 & 255, v & 255]; }
  var NEAR_MARK = PALETTE.map(function (hex) {
    var a = rgb(hex), b = rgb(WRONG);
    return Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]) < NEAR;
  });
  function wrongStyle(n, e) { return n <= FRAME_MAX_N && e[1] - e[0] >= 12 ? 'frame' : 'corner'; }
  function corners(ctx, n, e, cmp, target, near) {  // the corners of the wrong cells whose colour is (not) near
    ctx.beginPath();
    for (var r = 0; r < n; r++) {
      for (var c = 0; c < n; c++) {
        if (cmp.cells[r * n + c] === 0 || !!NEAR_MARK[(target[r] || '').charCodeAt(c) - 48] !== near) { continue; }
        var k = Math.max(2, Math.round(Math.min(e[c + 1] - e[c], e[r + 1] - e[r]) / 3) + 1);
        ctx.moveTo(e[c], e[r]);
        ctx.lineTo(e[c] + k, e[r]);
        ctx.lineTo(e[c], e[r] + k);
        ctx.closePath();
      }
    }
    ctx.fill();
  }
  function markWrong(ctx, n, e, cmp, target, dpr) {
    var style = wrongStyle(n, e), r, c;
    if (style === 'corner') {
      ctx.fillStyle = WRONG;
      corners(ctx, n, e, cmp, target, false);
      ctx.fillStyle = '#ffffff';
      corners(ctx, n, e, cmp, target, true);
      return;
    }
    for (r = 0; r < n; r++) {
      for (c = 0; c < n; c++) {
        if (cmp.cells[r * n + c] === 0) { continue; }
        var cw = Math.min(e[c + 1] - e[c], e[r + 1] - e[r]);
        var lw = Math.max(1, Math.min(Math.round(2 * dpr), Math.floor(cw / 4)));
        ctx.fillStyle = WRONG;
        frame(ctx, e[c], e[r], e[c + 1], e[r + 1], lw);
        var hw = Math.max(1, Math.round(dpr / 2));
        if (cw >= 2 * (lw + hw) + Math.max(2, Math.round(2 * dpr))) {
          ctx.fillStyle = '#ffffff';
          frame(ctx, e[c] + lw, e[r] + lw, e[c + 1] - lw, e[r + 1] - lw, hw);
        }
      }
    }
  }

  // ---- drawing one sample ----------------------------------------------------------------------------------------
  function compare(n, target, parsed) {  // per cell: 0 right, 1 wrong value, 2 '?', 3 missing
    var st = new Uint8Array(n * n), info = {wrong: 0, unknown: 0, missing: 0, missingRows: 0, shortRows: 0,
      extraRows: 0, longRows: 0};
    if (!parsed) { return null; }
    info.extraRows = Math.max(0, parsed.length - n);
    info.missingRows = Math.max(0, n - parsed.length);
    for (var r = 0; r < n; r++) {
      var row = r < parsed.length ? String(parsed[r] === null || parsed[r] === undefined ? '' : parsed[r]) : null;
      if (row !== null && row.length < n) { info.shortRows++; }
      if (row !== null && row.length > n) { info.longRows++; }
      var t = target[r] || '';
      for (var c = 0; c < n; c++) {
        var k = r * n + c;
        if (row === null || c >= row.length) { st[k] = 3; info.missing++; }
        else if (row[c] === t[c]) { st[k] = 0; }
        else if (row[c] >= '0' && row[c] <= '9') { st[k] = 1; info.wrong++; }
        else { st[k] = 2; info.unknown++; }
      }
    }
    info.cells = st;
    return info;
  }
  function drawGrid(cv, n, target, cmp) {
    var ctx = sizeCanvas(cv), w = cv.width, e = edges(n, w), dpr = window.devicePixelRatio || 1;
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, w, w);
    for (var r = 0; r < n; r++) {
      var t = target[r] || '';
      for (var c = 0; c < n; c++) {
        var x = t.charCodeAt(c) - 48;
        ctx.fillStyle = x >= 0 && x <= 9 ? PALETTE[x] : '#000000';
        ctx.fillRect(e[c], e[r], e[c + 1] - e[c], e[r + 1] - e[r]);
      }
    }
    if (D.outline && D.outline[String(n)]) { outlines(ctx, n, e, w); }  // none: an image drawn without
    if (cmp && $('t-wrong').checked) { markWrong(ctx, n, e, cmp, target, dpr); }
    if ($('t-patch').checked) { patchLines(ctx, w); }
  }
  function drawAnswer(cv, n, parsed, cmp) {
    var ctx = sizeCanvas(cv), w = cv.width, e = edges(n, w), dpr = window.devicePixelRatio || 1;
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, w, w);
    if (!parsed) {
      ctx.fillStyle = '#f2f2f2';
      ctx.fillRect(0, 0, w, w);
      ctx.fillStyle = '#777777';
      ctx.font = Math.round(18 * dpr) + 'px system-ui,sans-serif';
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText('nothing was read', w / 2, w / 2);
      return;
    }
    var pat = null, missing = [];
    for (var r = 0; r < n; r++) {
      var row = r < parsed.length ? String(parsed[r] === null || parsed[r] === undefined ? '' : parsed[r]) : '';
      for (var c = 0; c < n; c++) {
        var s = cmp.cells[r * n + c];
        if (s === 3) { missing.push(r, c); continue; }
        var x = row.charCodeAt(c) - 48;
        if (x >= 0 && x <= 9) { ctx.fillStyle = PALETTE[x]; }
        else { ctx.fillStyle = pat || (pat = hatchPattern(ctx)); }
        ctx.fillRect(e[c], e[r], e[c + 1] - e[c], e[r + 1] - e[r]);
      }
    }
    var skip = new Uint8Array(n * n);
    for (var q = 0; q < missing.length; q += 2) { skip[missing[q] * n + missing[q + 1]] = 1; }
    gridlines(ctx, n, e, w, skip);
    if (missing.length) {  // white, with a dashed outline
      ctx.strokeStyle = '#8a8a8a';
      ctx.lineWidth = 1;
      var d = Math.max(2, Math.round(3 * dpr));
      ctx.setLineDash([d, d]);
      ctx.beginPath();
      for (var j = 0; j < missing.length; j += 2) {
        var mr = missing[j], mc = missing[j + 1];
        ctx.rect(e[mc] + 0.5, e[mr] + 0.5, e[mc + 1] - e[mc] - 1, e[mr + 1] - e[mr] - 1);
      }
      ctx.stroke();
      ctx.setLineDash([]);
    }
    if ($('t-patch').checked) { patchLines(ctx, w); }
  }
  return {boundsOf: boundsOf, edges: edges, compare: compare, drawGrid: drawGrid, drawAnswer: drawAnswer,
    wrongStyle: wrongStyle};
}
