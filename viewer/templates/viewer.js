// The sample viewer. The index of every sample (#viewer-data) is read once; a sample's details are in
// chunks/NNNN.js, loaded once each with a <script> tag (so the page works from file://) and delivered, deflated,
// through window.g2mChunkZ. Only one page of the filtered list is in the DOM. Data becomes text (textContent) or pixels,
// never markup. Canvases are drawn at the device's pixel ratio with every cell edge on a whole device pixel.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('viewer-data').textContent);
  var ROWS = D.rows || [];
  var S = D.image_size || 512, CHUNK = D.chunk_size || 50, PAGE = 100, MAX_CSS = 384;
  var ID = 0, TASK = 1, N = 2, C = 3, OUTCOME = 4, STRATEGY = 5, ACC = 6, SHAPE = 7, FINISH = 8;
  var HEX = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;
  var PALETTE = [], NAMES = [];
  for (var v = 0; v < 10; v++) {
    var col = (D.palette || [])[v];
    PALETTE.push(typeof col === 'string' && HEX.test(col) ? col : '#000000');
    NAMES.push(String((D.palette_names || [])[v] == null ? 'colour ' + v : D.palette_names[v]));
  }
  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function show(x) { return x === null || x === undefined || x === '' ? '-' : String(x); }
  function acc3(x) { return typeof x === 'number' && isFinite(x) ? x.toFixed(3) : '-'; }

  // ---- chunks -------------------------------------------------------------------------------------------------
  var chunks = {}, requested = {}, waiting = {}, failed = {};
  function chunkPath(k) { return 'chunks/' + ('000' + k).slice(-Math.max(4, String(k).length)) + '.js'; }
  window.g2mChunk = function (k, items) {
    k = Number(k);
    if (!(k >= 0) || !Array.isArray(items)) { return; }
    items.forEach(function (it, j) {  // what the chunk leaves to the index: a prompt per (N, C), an exact answer
      var row = ROWS[k * CHUNK + j];
      if (!it || !row) { return; }
      if (it.prompt == null && D.prompts) { it.prompt = D.prompts[row[N] + 'x' + row[C]]; }
      if (it.parsed === '=') { it.parsed = it.target; }  // read exactly as the target: not written twice
    });
    chunks[k] = items;
    var cbs = waiting[k] || [];
    delete waiting[k];
    cbs.forEach(function (f) { f(true); });
  };
  function chunkFailed(k) {
    failed[k] = true;
    var cbs = waiting[k] || [];
    delete waiting[k];
    cbs.forEach(function (f) { f(false); });
  }
  // a chunk as written: its JSON deflated (zlib) and in base64, inflated here; a chunk that does not inflate or
  // parse is a chunk that could not be loaded
  window.g2mChunkZ = function (k, b64) {
    k = Number(k);
    if (!(k >= 0) || typeof b64 !== 'string' || typeof DecompressionStream === 'undefined') { chunkFailed(k); return; }
    try {
      var bin = atob(b64), bytes = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) { bytes[i] = bin.charCodeAt(i); }
      new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'))).text()
        .then(function (text) { window.g2mChunk(k, JSON.parse(text)); }, function () { chunkFailed(k); })
        .catch(function () { chunkFailed(k); });
    } catch (e) { chunkFailed(k); }
  };
  function loadChunk(k, cb) {
    if (chunks[k]) { if (cb) { cb(true); } return; }
    if (failed[k]) { if (cb) { cb(false); } return; }
    if (cb) { (waiting[k] = waiting[k] || []).push(cb); }
    if (requested[k]) { return; }
    requested[k] = true;
    var s = document.createElement('script');
    s.src = chunkPath(k);
    s.async = true;
    s.onerror = function () { chunkFailed(k); };
    document.head.appendChild(s);
  }
  function detailOf(i) {
    var items = chunks[Math.floor(i / CHUNK)];
    return items ? items[i % CHUNK] || null : null;
  }

  // ---- filters, sort, order -----------------------------------------------------------------------------------
  function byList(list) {  // values in the index's own order, then any others alphabetically
    return function (a, b) {
      var i = list.indexOf(a), j = list.indexOf(b);
      if (i < 0) { i = 1e9; }
      if (j < 0) { j = 1e9; }
      return i - j || (a === null) - (b === null) || String(a).localeCompare(String(b));
    };
  }
  function numeric(a, b) { return a - b; }
  var FILTERS = [
    {key: 'n', field: N, cmp: numeric, label: function (x) { return x + ' x ' + x; }},
    {key: 'c', field: C, cmp: numeric},
    {key: 'task', field: TASK, cmp: byList([])},
    {key: 'outcome', field: OUTCOME, cmp: byList(D.outcomes || [])},
    {key: 'strategy', field: STRATEGY, cmp: byList(D.strategies || [])},
    {key: 'shape', field: SHAPE, cmp: byList(D.shapes || []), label: function (x) { return x === null ? 'none' : x; }}
  ];
  FILTERS.forEach(function (f) {
    var seen = new Map();
    ROWS.forEach(function (r) { var x = r[f.field] === undefined ? null : r[f.field]; if (!seen.has(x)) { seen.set(x, 0); } });
    f.values = Array.from(seen.keys()).sort(f.cmp);
    var at = new Map();
    f.values.forEach(function (x, j) { at.set(x, j); });
    f.of = new Int16Array(ROWS.length);
    ROWS.forEach(function (r, i) { f.of[i] = at.get(r[f.field] === undefined ? null : r[f.field]); });
    f.sel = -1;
    f.el = $('f-' + f.key);
    f.el.addEventListener('change', function () { f.sel = f.el.value === '' ? -1 : Number(f.el.value); refilter(); });
  });
  var idIndex = new Map(), lowerIds = new Array(ROWS.length);
  ROWS.forEach(function (r, i) { idIndex.set(String(r[ID]), i); lowerIds[i] = String(r[ID]).toLowerCase(); });
  var collator = new Intl.Collator(undefined, {numeric: true});
  var sortKey = 'index', query = '';
  var order = [], posOf = new Int32Array(ROWS.length), current = -1, page = 0;

  function refilter(keepPage) {
    var nf = FILTERS.length, counts = FILTERS.map(function (f) { return new Int32Array(f.values.length); });
    var out = [];
    for (var i = 0; i < ROWS.length; i++) {
      if (query && lowerIds[i].indexOf(query) < 0) { continue; }
      var miss = -1, misses = 0;
      for (var j = 0; j < nf; j++) {
        var f = FILTERS[j];
        if (f.sel >= 0 && f.of[i] !== f.sel) { misses++; miss = j; if (misses > 1) { break; } }
      }
      if (misses === 0) {
        out.push(i);
        for (j = 0; j < nf; j++) { counts[j][FILTERS[j].of[i]]++; }
      } else if (misses === 1) {
        counts[miss][FILTERS[miss].of[i]]++;  // a filter's counts ignore its own choice
      }
    }
    if (sortKey === 'id') {
      out.sort(function (a, b) { return collator.compare(String(ROWS[a][ID]), String(ROWS[b][ID])) || a - b; });
    } else if (sortKey === 'acc-asc' || sortKey === 'acc-desc') {
      var sign = sortKey === 'acc-asc' ? 1 : -1;
      out.sort(function (a, b) {
        var x = ROWS[a][ACC], y = ROWS[b][ACC];
        var nx = typeof x !== 'number', ny = typeof y !== 'number';
        if (nx || ny) { return (nx - ny) || a - b; }  // no number: last
        return sign * (x - y) || a - b;
      });
    }
    order = out;
    posOf.fill(-1);
    for (i = 0; i < out.length; i++) { posOf[out[i]] = i; }
    FILTERS.forEach(function (f, j) { fillSelect(f, counts[j]); });
    var pages = Math.max(1, Math.ceil(order.length / PAGE));
    if (current >= 0 && posOf[current] >= 0 && !keepPage) { page = Math.floor(posOf[current] / PAGE); }
    else if (!keepPage) { page = 0; }
    page = Math.min(page, pages - 1);
    countLine();
    renderList();
    if (current >= 0 && posOf[current] < 0 && order.length) { select(order[0]); }  // the one shown is filtered out
  }
  function countLine() {
    $('count').textContent = order.length.toLocaleString('en') + ' of ' + ROWS.length.toLocaleString('en') + ' samples' +
      (current >= 0 && posOf[current] < 0 ? ' (the one shown is not among them)' : '');
  }
  function fillSelect(f, counts) {
    var total = 0;
    for (var j = 0; j < counts.length; j++) { total += counts[j]; }
    var opts = [['', 'all (' + total + ')']];
    f.values.forEach(function (x, j) { opts.push([String(j), (f.label ? f.label(x) : show(x)) + ' (' + counts[j] + ')']); });
    var sel = f.el;
    if (sel.options.length !== opts.length) {
      sel.textContent = '';
      opts.forEach(function (o) { var e = el('option', null, o[1]); e.value = o[0]; sel.appendChild(e); });
    } else {
      opts.forEach(function (o, j) { if (sel.options[j].textContent !== o[1]) { sel.options[j].textContent = o[1]; } });
    }
    sel.value = f.sel < 0 ? '' : String(f.sel);
  }

  // ---- the list -----------------------------------------------------------------------------------------------
  var OUTCLASS = {'exact': 'o-exact', 'wrong cells': 'o-wrong', 'parse failure': 'o-parse', 'truncated': 'o-trunc',
    'request failed': 'o-request'};
  var tbody = $('list').tBodies[0], shownRows = new Map();
  function renderList() {
    var pages = Math.max(1, Math.ceil(order.length / PAGE));
    var from = page * PAGE, to = Math.min(order.length, from + PAGE), frag = document.createDocumentFragment();
    shownRows = new Map();
    for (var p = from; p < to; p++) {
      var i = order[p], r = ROWS[i], tr = document.createElement('tr');
      tr.dataset.i = i;
      var idc = el('td', 'text id', r[ID]);
      idc.title = String(r[ID]);
      tr.appendChild(idc);
      tr.appendChild(el('td', 'text o ' + (OUTCLASS[r[OUTCOME]] || ''), show(r[OUTCOME])));
      tr.appendChild(el('td', null, acc3(r[ACC])));
      tr.appendChild(el('td', 'text', show(r[SHAPE])));
      if (i === current) { tr.className = 'sel'; tr.setAttribute('aria-selected', 'true'); }
      shownRows.set(i, tr);
      frag.appendChild(tr);
    }
    tbody.textContent = '';
    tbody.appendChild(frag);
    $('p-where').textContent = order.length ? 'page ' + (page + 1) + ' of ' + pages + ' (' + (from + 1) + '\u2013' + to + ')' : 'no samples match';
    $('p-first').disabled = $('p-prev').disabled = page === 0;
    $('p-next').disabled = $('p-last').disabled = page >= pages - 1;
  }
  function markSelected(prev) {
    var a = shownRows.get(prev), b = shownRows.get(current);
    if (a) { a.className = ''; a.removeAttribute('aria-selected'); }
    if (b) {
      b.className = 'sel';
      b.setAttribute('aria-selected', 'true');
      var box = $('list-scroll'), head = $('list').tHead.offsetHeight;
      var top = b.offsetTop, bottom = top + b.offsetHeight;
      if (top - head < box.scrollTop) { box.scrollTop = top - head; }
      else if (bottom > box.scrollTop + box.clientHeight) { box.scrollTop = bottom - box.clientHeight; }
    }
  }
  tbody.addEventListener('click', function (e) {
    var tr = e.target.closest('tr');
    if (tr && tr.dataset.i !== undefined) { select(Number(tr.dataset.i)); }
  });
  function toPage(p) {
    var pages = Math.max(1, Math.ceil(order.length / PAGE));
    page = Math.max(0, Math.min(pages - 1, p));
    renderList();
    $('list-scroll').scrollTop = 0;
  }
  $('p-first').addEventListener('click', function () { toPage(0); });
  $('p-prev').addEventListener('click', function () { toPage(page - 1); });
  $('p-next').addEventListener('click', function () { toPage(page + 1); });
  $('p-last').addEventListener('click', function () { toPage(1e9); });
  $('q').addEventListener('input', function () { query = $('q').value.trim().toLowerCase(); refilter(); });
  $('sort').addEventListener('change', function () { sortKey = $('sort').value; refilter(); });
  $('reset').addEventListener('click', function () {
    FILTERS.forEach(function (f) { f.sel = -1; });
    $('q').value = '';
    query = '';
    refilter();
  });

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
  function patchLines(ctx, w) {
    var size = Number($('t-size').value);
    if (!(size >= 2)) { return; }
    var dpr = window.devicePixelRatio || 1, lw = Math.max(1, Math.round(dpr));
    ctx.fillStyle = '#ffffff';
    for (var x = size; x < S; x += size) {
      var p = Math.round(x * w / S) - Math.floor(lw / 2);
      ctx.fillRect(p, 0, lw, w);
      ctx.fillRect(0, p, w, lw);
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
    // each cell's grey outline, as the release draws it: its width in the image's pixels, scaled, at least 1
    var ow = D.outline && D.outline[String(n)];
    if (ow) {
      var olw = Math.max(1, Math.round(ow * w / S));
      ctx.fillStyle = D.outline_colour || '#3c3c3c';
      for (r = 0; r < n; r++) {
        for (c = 0; c < n; c++) {
          if (Math.min(e[c + 1] - e[c], e[r + 1] - e[r]) > 2 * olw + 1) { frame(ctx, e[c], e[r], e[c + 1], e[r + 1], olw); }
        }
      }
    }
    if (cmp && $('t-wrong').checked) {  // red, with a white line inside it where the cell has room (a red cell)
      for (r = 0; r < n; r++) {
        for (c = 0; c < n; c++) {
          if (cmp.cells[r * n + c] === 0) { continue; }
          var cw = Math.min(e[c + 1] - e[c], e[r + 1] - e[r]);
          var lw = Math.max(1, Math.min(Math.round(2 * dpr), Math.floor(cw / 4)));
          ctx.fillStyle = '#e00000';
          frame(ctx, e[c], e[r], e[c + 1], e[r + 1], lw);
          var hw = Math.max(1, Math.round(dpr / 2));
          if (cw >= 2 * (lw + hw) + Math.max(2, Math.round(2 * dpr))) {
            ctx.fillStyle = '#ffffff';
            frame(ctx, e[c] + lw, e[r] + lw, e[c + 1] - lw, e[r + 1] - lw, hw);
          }
        }
      }
    }
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
  function plural(k, one, many) { return k + ' ' + (k === 1 ? one : many); }
  function answerNote(n, parsed, cmp, row) {
    var box = $('answer-note');
    box.textContent = '';
    if (!parsed) { box.textContent = 'nothing was read (' + show(row[OUTCOME]) + ')'; return; }
    var shape = parsed.length + ' row' + (parsed.length === 1 ? '' : 's') + ' read';
    var odd = [];
    if (cmp.missingRows) { odd.push(plural(cmp.missingRows, 'row missing', 'rows missing')); }
    if (cmp.shortRows) { odd.push(plural(cmp.shortRows, 'row short', 'rows short')); }
    var cells = n * n - (cmp.wrong + cmp.unknown + cmp.missing);
    var parts = [shape + (odd.length ? ' (' + odd.join(', ') + ')' : ''),
      cells + ' of ' + n * n + ' cells right; ' + cmp.wrong + ' wrong, ' + cmp.unknown + ' "?", ' + cmp.missing + ' missing'];
    box.appendChild(document.createTextNode(parts.join('; ')));
    var extra = [];
    if (cmp.extraRows) { extra.push(plural(cmp.extraRows, 'extra row', 'extra rows')); }
    if (cmp.longRows) { extra.push(plural(cmp.longRows, 'row with extra cells', 'rows with extra cells')); }
    if (extra.length) {
      box.appendChild(document.createElement('br'));
      box.appendChild(el('span', 'warn', extra.join(', ') + ', not drawn'));
    }
  }
  function legend(c) {
    var box = $('legend');
    box.textContent = '';
    for (var v = 0; v < c && v < 10; v++) {
      var s = el('span'), sw = el('i');
      sw.style.backgroundColor = PALETTE[v];
      s.appendChild(sw);
      s.appendChild(document.createTextNode(v + ' ' + NAMES[v]));
      box.appendChild(s);
    }
    [['q', '"?": a value outside the palette'], ['miss', 'missing cell'], ['wrong', 'wrong cell (on the grid)']].forEach(function (x) {
      var s = el('span');
      s.appendChild(el('i', x[0]));
      s.appendChild(document.createTextNode(x[1]));
      box.appendChild(s);
    });
  }
  function copyButton(text) {
    var b = el('button', 'copy', 'copy');
    b.type = 'button';
    b.title = 'copy to the clipboard';
    b.addEventListener('click', function () {
      function done(ok) { b.textContent = ok ? 'copied' : 'select and copy'; setTimeout(function () { b.textContent = 'copy'; }, 1200); }
      function fallback() {
        var t = el('textarea');
        t.value = text;
        t.setAttribute('readonly', '');
        t.style.position = 'fixed';
        t.style.left = '-9999px';
        document.body.appendChild(t);
        t.select();
        var ok = false;
        try { ok = document.execCommand('copy'); } catch (err) { ok = false; }
        document.body.removeChild(t);
        done(ok);
      }
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { done(true); }, fallback);
      } else { fallback(); }
    });
    return b;
  }
  function facts(row, det) {
    var dl = $('facts');
    dl.textContent = '';
    function add(label, value, opts) {
      var d = el('div', opts && opts.span ? 'span' : null), dd = el('dd');
      d.appendChild(el('dt', null, label));
      if (opts && opts.code) { dd.appendChild(el('code', null, value)); dd.appendChild(copyButton(String(value))); }
      else { dd.textContent = value; }
      if (opts && opts.cls) { dd.className = opts.cls; }
      d.appendChild(dd);
      dl.appendChild(d);
    }
    add('id', String(row[ID]), {code: true, span: true});
    add('task', String(row[TASK]), {code: true, span: String(row[TASK]).length > 14});
    add('N', row[N]);
    add('C', row[C]);
    add('seed', show(det && det.seed));
    add('outcome', show(row[OUTCOME]), {cls: OUTCLASS[row[OUTCOME]] || ''});
    add('parse strategy', show(row[STRATEGY]));
    add('finish reason', show(det && det.finish != null ? det.finish : row[FINISH]));
    add('cell accuracy', acc3(row[ACC]));
    add('answer budget', det && typeof det.budget === 'number' ? det.budget.toLocaleString('en') + ' tokens' : '-');
    add('characters', det && typeof det.chars === 'number' ? det.chars.toLocaleString('en') : '-');
    add('error shape', show(row[SHAPE]));
    if (det && det.reason) { add('why parsing failed', String(det.reason), {span: true, cls: 'o-parse'}); }
  }
  function answerText(det) {
    var pre = $('text'), text = typeof det.text === 'string' ? det.text : '', sp = det.span;
    pre.textContent = '';
    var a = -1, b = -1;
    if (Array.isArray(sp) && sp.length === 2 && typeof sp[0] === 'number' && typeof sp[1] === 'number') {
      a = Math.max(0, Math.min(text.length, sp[0]));
      b = Math.max(a, Math.min(text.length, sp[1]));
    }
    if (a >= 0 && b > a) {
      pre.appendChild(document.createTextNode(text.slice(0, a)));
      pre.appendChild(el('mark', null, text.slice(a, b)));
      pre.appendChild(document.createTextNode(text.slice(b)));
    } else {
      pre.appendChild(document.createTextNode(text));
    }
    if (text === '') { pre.appendChild(el('i', null, '(empty answer)')); }
    var cut = $('text-cut'), notes = [];
    if (det.text_cut > 0) { notes.push('\u2026 ' + det.text_cut.toLocaleString('en') + ' more characters not shown'); }
    if (Array.isArray(sp) && sp.length === 2 && sp[1] > text.length) { notes.push('the part read runs past what is shown (characters ' + sp[0] + '\u2013' + sp[1] + ')'); }
    cut.hidden = notes.length === 0;
    cut.textContent = notes.join('; ');
    $('prompt').textContent = typeof det.prompt === 'string' ? det.prompt : '';
  }
  var shownDet = null, shownRow = -1;
  function draw(i, det) {
    var row = ROWS[i], n = row[N], target = Array.isArray(det.target) ? det.target : [];
    var parsed = Array.isArray(det.parsed) ? det.parsed : null;
    var cmp = compare(n, target, parsed);
    shownDet = {det: det, cmp: cmp, parsed: parsed, target: target, n: n};
    shownRow = i;
    drawGrid($('grid'), n, target, cmp);
    drawAnswer($('answer'), n, parsed, cmp);
    var gn = n + ' x ' + n + ', ' + row[C] + ' colours, cells at the image\u2019s own bounds';
    if (!parsed) { gn += '; no answer to compare'; }
    else if (cmp.wrong + cmp.unknown + cmp.missing) { gn += '; ' + (cmp.wrong + cmp.unknown + cmp.missing) + ' cells wrong or missing'; }
    $('grid-note').textContent = gn;
    answerNote(n, parsed, cmp, row);
    $('hover').textContent = '\u00a0';
  }
  function redraw() {
    if (shownDet && shownRow >= 0) {
      var s = shownDet;
      drawGrid($('grid'), s.n, s.target, s.cmp);
      drawAnswer($('answer'), s.n, s.parsed, s.cmp);
    }
  }
  function render(i, ok) {
    var row = ROWS[i], det = detailOf(i), status = $('status'), pane = $('detail');
    if (!ok || !det) {
      facts(row, null);
      status.hidden = false;
      status.textContent = 'the details of this sample could not be loaded (' + chunkPath(Math.floor(i / CHUNK)) + ')';
      return;
    }
    status.textContent = String(det.id) === String(row[ID]) ? ''
      : 'warning: the chunk gives id ' + det.id + ' at this position, not ' + row[ID];
    status.hidden = status.textContent === '';
    facts(row, det);
    legend(row[C]);
    draw(i, det);
    answerText(det);
    pane.setAttribute('data-drawn', String(row[ID]));
    if (!document.body.hasAttribute('data-ready')) { document.body.setAttribute('data-ready', '1'); }
  }

  // ---- selection, keys, address -------------------------------------------------------------------------------
  function setHash(id) {
    var h = '#' + encodeURIComponent(id);
    if (location.hash === h) { return; }
    try { history.replaceState(null, '', h); } catch (err) { location.replace(h); }
  }
  function select(i) {
    i = Number(i);
    if (!(i >= 0 && i < ROWS.length) || i !== Math.floor(i)) { return; }
    var prev = current;
    current = i;
    var p = posOf[i];
    if (p >= 0 && Math.floor(p / PAGE) !== page) { page = Math.floor(p / PAGE); renderList(); }
    markSelected(prev);
    setHash(String(ROWS[i][ID]));
    var pane = $('detail');
    pane.removeAttribute('data-drawn');
    var k = Math.floor(i / CHUNK);
    if (!chunks[k] && !failed[k]) { $('status').hidden = false; $('status').textContent = 'loading ' + chunkPath(k) + '\u2026'; }
    loadChunk(k, function (ok) { if (current === i) { render(i, ok); } });
    if (p >= 0) {  // the neighbours' chunks, so that the next key is instant
      [p + 1, p - 1].forEach(function (q) { if (q >= 0 && q < order.length) { loadChunk(Math.floor(order[q] / CHUNK)); } });
    }
    countLine();
  }
  function step(d) {
    if (!order.length) { return; }
    var p = current >= 0 ? posOf[current] : -1;
    if (p < 0) { select(order[d > 0 ? 0 : order.length - 1]); return; }
    var q = p + d;
    if (q >= 0 && q < order.length) { select(order[q]); }
  }
  document.addEventListener('keydown', function (e) {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) { return; }
    var t = e.target, tag = t && t.tagName, letter = e.key === 'j' || e.key === 'k';
    if (tag === 'TEXTAREA' || (t && t.isContentEditable)) { return; }
    if (tag === 'INPUT' && !/^(checkbox|radio|button|submit|reset)$/.test(t.type) && !(letter && t.type === 'number')) { return; }
    if (tag === 'SELECT' && !letter) { return; }  // arrows choose an option there; j and k still move
    if (e.key === 'ArrowDown' || e.key === 'j') { e.preventDefault(); step(1); }
    else if (e.key === 'ArrowUp' || e.key === 'k') { e.preventDefault(); step(-1); }
  });
  function fromHash() {
    var h = location.hash.slice(1), id = h;
    try { id = decodeURIComponent(h); } catch (err) { id = h; }
    return idIndex.has(id) ? idIndex.get(id) : (idIndex.has(h) ? idIndex.get(h) : -1);
  }
  window.addEventListener('hashchange', function () { var i = fromHash(); if (i >= 0 && i !== current) { select(i); } });
  ['t-wrong', 't-patch'].forEach(function (id) { $(id).addEventListener('change', redraw); });
  $('t-size').addEventListener('input', function () { if ($('t-patch').checked) { redraw(); } });
  var pendingResize = false;
  window.addEventListener('resize', function () {
    if (pendingResize) { return; }
    pendingResize = true;
    requestAnimationFrame(function () { pendingResize = false; redraw(); });
  });

  // what the pointer is over: the cell, its true value and the answer's
  function hover(e) {
    var s = shownDet, cv = e.currentTarget;
    if (!s) { return; }
    var rect = cv.getBoundingClientRect(), b = boundsOf(s.n);
    var x = (e.clientX - rect.left - cv.clientLeft) * S / cv.clientWidth, y = (e.clientY - rect.top - cv.clientTop) * S / cv.clientHeight;
    function cell(v) { for (var j = 0; j < s.n; j++) { if (v >= b[j] && v < b[j + 1]) { return j; } } return -1; }
    var r = cell(y), c = cell(x), out = $('hover');
    if (r < 0 || c < 0) { out.textContent = '\u00a0'; return; }
    var tv = (s.target[r] || '').charAt(c), txt = 'row ' + r + ', column ' + c + ' (from 0): true ' + tv + ' ' + (NAMES[+tv] || '');
    if (s.parsed) {
      var ar = r < s.parsed.length ? String(s.parsed[r] || '') : null, av = ar !== null && c < ar.length ? ar.charAt(c) : null;
      txt += '; answer ' + (av === null ? 'missing' : av === '?' ? '? (outside the palette)' : av + ' ' + (NAMES[+av] || ''));
      if (av !== null && av !== tv) { txt += ' \u2717'; }
    }
    out.textContent = txt;
  }
  ['grid', 'answer'].forEach(function (id) {
    $(id).addEventListener('mousemove', hover);
    $(id).addEventListener('mouseleave', function () { $('hover').textContent = '\u00a0'; });
  });

  window.g2mViewer = {
    order: function () { return order.slice(); },
    current: function () { return current; },
    select: select,
    cellCentre: function (which, n, r, c) {  // the centre of cell (r, c) of an n x n grid, in backing-store pixels
      var cv = $(which === 'answer' ? 'answer' : 'grid'), e = edges(n, cv.width);
      return [Math.floor((e[c] + e[c + 1]) / 2), Math.floor((e[r] + e[r + 1]) / 2)];
    }
  };

  refilter();
  var start = fromHash();
  if (start < 0 && order.length) { start = order[0]; }
  if (start >= 0) { select(start); } else { $('status').textContent = 'no samples'; }
})();
