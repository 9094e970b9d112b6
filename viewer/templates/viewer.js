// The sample viewer. The index of every sample (#viewer-data) is read once; a sample's details are in
// chunks/NNNN.js, loaded once each with a <script> tag (so the page works from file://) and delivered, deflated,
// through window.g2mChunkZ. Only one page of the filtered list is in the DOM. Data becomes text (textContent) or pixels,
// never markup. The canvases are drawn by viewer_draw.js. The address keeps the view: ?filters#id.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('viewer-data').textContent);
  var ROWS = D.rows || [];
  var S = D.image_size || 512, CHUNK = D.chunk_size || 50, PAGE = 100;
  var ID = 0, TASK = 1, N = 2, C = 3, OUTCOME = 4, STRATEGY = 5, ACC = 6, SHAPE = 7, FINISH = 8;
  var HEX = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;
  var PALETTE = [], NAMES = [];
  for (var v = 0; v < 10; v++) {
    var col = (D.palette || [])[v];
    PALETTE.push(typeof col === 'string' && HEX.test(col) ? col : '#000000');
    NAMES.push(String((D.palette_names || [])[v] == null ? 'colour ' + v : D.palette_names[v]));
  }
  var OUTLINE = typeof D.outline_colour === 'string' && HEX.test(D.outline_colour) ? D.outline_colour : '#3c3c3c';
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
    if (current >= 0 && posOf[current] < 0 && order.length) { select(order[0], true); }  // the one shown: filtered out
    else if (shownRows.get(current)) { reveal(shownRows.get(current), true); }
    writeAddress();
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
  // a row brought into the part of the list one sees: the list's box can run past the bottom of the window (the
  // header above the sticky pane), so what counts is the box cut to the window; centre: a jump (an address, a filter),
  // else the least scroll (a step)
  function reveal(tr, centre) {
    var box = $('list-scroll'), b = box.getBoundingClientRect(), head = $('list').tHead.offsetHeight;
    var top = Math.max(b.top + box.clientTop, 0) + head;
    var bottom = Math.min(b.top + box.clientTop + box.clientHeight, window.innerHeight || document.documentElement.clientHeight);
    var r = tr.getBoundingClientRect();
    if (bottom - top < 2 * r.height) { tr.scrollIntoView({block: 'nearest'}); return; }  // the list is out of sight
    if (r.top >= top && r.bottom <= bottom) { return; }
    if (centre) { box.scrollTop += (r.top + r.bottom - top - bottom) / 2; }
    else { box.scrollTop += r.top < top ? r.top - top : r.bottom - bottom; }
    r = tr.getBoundingClientRect();  // the list's end, under the window's: the window scrolls to the box's end
    var over = b.bottom - (window.innerHeight || document.documentElement.clientHeight);
    if ((r.top < top || r.bottom > bottom) && over > 0) { window.scrollBy(0, Math.ceil(over)); r = tr.getBoundingClientRect(); }
    if (r.top < 0 || r.bottom > (window.innerHeight || document.documentElement.clientHeight)) { tr.scrollIntoView({block: 'nearest'}); }
  }
  function markSelected(prev, centre) {
    var a = shownRows.get(prev), b = shownRows.get(current);
    if (a) { a.className = ''; a.removeAttribute('aria-selected'); }
    if (b) {
      b.className = 'sel';
      b.setAttribute('aria-selected', 'true');
      reveal(b, centre);
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
  $('reset').addEventListener('click', function () { clearFilters(); refilter(); });

  // ---- drawing (viewer_draw.js) ------------------------------------------------------------------------------
  var G = g2mDrawing(D, PALETTE, OUTLINE, $);
  var boundsOf = G.boundsOf, edges = G.edges, compare = G.compare, drawGrid = G.drawGrid, drawAnswer = G.drawAnswer,
    wrongStyle = G.wrongStyle;

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
  function legend(c, n) {
    var box = $('legend'), corner = wrongStyle(n, edges(n, $('grid').width)) === 'corner';
    box.textContent = '';
    for (var v = 0; v < c && v < 10; v++) {
      var s = el('span'), sw = el('i');
      sw.style.backgroundColor = PALETTE[v];
      s.appendChild(sw);
      s.appendChild(document.createTextNode(v + ' ' + NAMES[v]));
      box.appendChild(s);
    }
    [['q', '"?": a value outside the palette'], ['miss', 'missing cell'],
     [corner ? 'wrong corner' : 'wrong', corner ? 'wrong cell (on the grid; white on a red cell)' : 'wrong cell (on the grid)']].forEach(function (x) {
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
    draw(i, det);
    legend(row[C], row[N]);
    answerText(det);
    pane.setAttribute('data-drawn', String(row[ID]));
    if (!document.body.hasAttribute('data-ready')) { document.body.setAttribute('data-ready', '1'); }
  }

  // ---- selection, keys, address -------------------------------------------------------------------------------
  // the address: ?filters#id. The query holds the filters by value (n=12&outcome=wrong+cells&q=...&sort=...), the
  // fragment the sample shown; both are kept up to date (replaceState: no history entry per key) and read on load
  function valueKey(x) { return x === null || x === undefined ? 'none' : String(x); }
  function address() {
    var q = new URLSearchParams();
    FILTERS.forEach(function (f) { if (f.sel >= 0) { q.set(f.key, valueKey(f.values[f.sel])); } });
    if ($('q').value.trim()) { q.set('q', $('q').value.trim()); }
    if (sortKey !== 'index') { q.set('sort', sortKey); }
    var search = q.toString();
    return location.pathname + (search ? '?' + search : '') +
      (current >= 0 ? '#' + encodeURIComponent(String(ROWS[current][ID])) : location.hash);
  }
  function writeAddress() {
    var want = address();
    if (location.pathname + location.search + location.hash === want) { return; }
    try { history.replaceState(null, '', want); } catch (err) { /* a browser that will not: the address stays */ }
  }
  function readAddress() {
    var q = new URLSearchParams(location.search);
    FILTERS.forEach(function (f) {
      var v = q.get(f.key), j = v === null ? -1 : f.values.map(valueKey).indexOf(v);
      f.sel = j;
    });
    $('q').value = q.get('q') || '';
    query = $('q').value.trim().toLowerCase();
    var sort = q.get('sort');
    sortKey = sort && [].some.call($('sort').options, function (o) { return o.value === sort; }) ? sort : 'index';
    $('sort').value = sortKey;
  }
  function clearFilters() {
    FILTERS.forEach(function (f) { f.sel = -1; });
    $('q').value = '';
    query = '';
  }
  function select(i, centre) {
    i = Number(i);
    if (!(i >= 0 && i < ROWS.length) || i !== Math.floor(i)) { return; }
    var prev = current;
    current = i;
    var p = posOf[i];
    if (p >= 0 && Math.floor(p / PAGE) !== page) { page = Math.floor(p / PAGE); renderList(); }
    markSelected(prev, centre);
    writeAddress();
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
  // a sample named by the address is shown, in the list too: filters that leave it out are cleared
  function goTo(i) {
    if (posOf[i] < 0) { clearFilters(); refilter(); }
    if (i !== current) { select(i, true); } else if (shownRows.get(i)) { reveal(shownRows.get(i), true); }
  }
  window.addEventListener('hashchange', function () { var i = fromHash(); if (i >= 0) { goTo(i); } });
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
    },
    cellEdges: function (which, n) {  // the cell edges of an n x n grid, in backing-store pixels
      return edges(n, $(which === 'answer' ? 'answer' : 'grid').width);
    }
  };

  readAddress();
  refilter();
  var start = fromHash();
  if (start >= 0) { goTo(start); }
  else if (order.length) { select(order[0], true); }
  else { $('status').textContent = ROWS.length ? 'no samples match the filters' : 'no samples'; }
})();
