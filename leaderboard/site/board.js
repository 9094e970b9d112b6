// The leaderboard's boards: every row travels once as JSON (#board-data); only the page in view is drawn, sorted
// and filtered over all rows. Written by leaderboard/site/index_page.py; cells are built with DOM calls, never as markup.
var DATA = JSON.parse(document.getElementById('board-data').textContent);
var query = '';
function cell(tr, cls, v, build) {
  var td = document.createElement('td');
  if (cls) { td.className = cls; }
  if (v !== null) { td.setAttribute('data-v', v); }
  build(td);
  tr.appendChild(td);
}
function link(parent, href, text, attrs) {
  var a = document.createElement('a');
  a.setAttribute('href', href);
  a.textContent = text;
  Object.keys(attrs).forEach(function (k) { a.setAttribute(k, attrs[k]); });
  parent.appendChild(a);
  return a;
}
function rowOf(r, view) {  // the same cells the page was written with (values and text come from the data)
  var tr = document.createElement('tr');
  tr.className = r.kind;
  tr.setAttribute('data-name', r.name);
  cell(tr, 'text', r.name, function (td) {
    link(td, r.page, r.name, {});
    if (r.url && /^https?:\/\//.test(r.url)) {
      td.appendChild(document.createTextNode(' '));
      link(td, r.url, '\u2197', {'class': 'ext', rel: 'noopener nofollow', title: 'model link'});
    }
    if (r.kind === 'baseline') {
      td.appendChild(document.createTextNode(' '));
      var b = document.createElement('span'); b.className = 'badge'; b.textContent = 'baseline'; td.appendChild(b);
    }
  });
  r.info.forEach(function (v) { cell(tr, 'text', v, function (td) { td.textContent = v || '-'; }); });
  var vals = r.views[view];
  vals.slice(0, DATA.scores).forEach(function (c) { cell(tr, '', c[0], function (td) { td.textContent = c[1]; }); });
  cell(tr, r.raw ? 'text' : 'text muted', null, function (td) {
    if (r.raw) { link(td, r.raw, 'download', {download: ''}); } else { td.textContent = 'built in'; }
  });
  vals.slice(DATA.scores).forEach(function (c) { cell(tr, '', c[0], function (td) { td.textContent = c[1]; }); });
  return tr;
}
function keyOf(r, view, col) {  // the data-v of a column, as the cells carry it
  if (col === 0) { return r.name; }
  if (col <= 3) { return r.info[col - 1]; }
  var k = col - 4, vals = r.views[view];
  if (k < DATA.scores) { return vals[k][0]; }
  if (k === DATA.scores) { return null; }
  return vals[k - 1][0];
}
function draw(id) {
  var b = DATA.boards[id], table = document.getElementById(id), body = table.tBodies[0];
  var rows = b.order.map(function (i) { return DATA.rows[i]; }).filter(function (r) {
    return query === '' || r.name.toLowerCase().indexOf(query) >= 0;
  });
  if (b.col !== null) {
    rows.sort(function (p, q) {
      var x = keyOf(p, b.view, b.col), y = keyOf(q, b.view, b.col);
      if (x === '' || x === null) { return 1; }
      if (y === '' || y === null) { return -1; }
      var nx = parseFloat(x), ny = parseFloat(y);
      var c = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
      return b.dir === 'ascending' ? c : -c;
    });
  }
  var pages = Math.max(1, Math.ceil(rows.length / DATA.page));
  b.page = Math.min(b.page, pages - 1);
  var shown = rows.slice(b.page * DATA.page, (b.page + 1) * DATA.page);
  while (body.firstChild) { body.removeChild(body.firstChild); }
  shown.forEach(function (r) { body.appendChild(rowOf(r, b.view)); });
  var pager = document.getElementById('pager-' + id);
  pager.hidden = pages < 2;
  pager.querySelector('.where').textContent = 'rows ' + (rows.length ? b.page * DATA.page + 1 : 0) + '\u2013' +
    (b.page * DATA.page + shown.length) + ' of ' + rows.length;
  pager.querySelector('.prev').disabled = b.page === 0;
  pager.querySelector('.next').disabled = b.page >= pages - 1;
}
Object.keys(DATA.boards).forEach(function (id) {
  var b = DATA.boards[id], table = document.getElementById(id);
  b.page = 0;
  b.col = null;
  table.querySelectorAll('th.sortable').forEach(function (th) {
    th.addEventListener('click', function () {
      var now = th.getAttribute('aria-sort');
      var first = th.getAttribute('data-first') || 'ascending';  // best first: descending when higher is better
      table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('aria-sort'); });
      b.dir = now ? (now === 'ascending' ? 'descending' : 'ascending') : first;
      b.col = th.cellIndex;
      b.page = 0;
      th.setAttribute('aria-sort', b.dir);
      draw(id);
    });
  });
  var pager = document.getElementById('pager-' + id);
  pager.querySelector('.prev').addEventListener('click', function () { b.page -= 1; draw(id); });
  pager.querySelector('.next').addEventListener('click', function () { b.page += 1; draw(id); });
  draw(id);
});
document.querySelectorAll('button.tab').forEach(function (b) {
  b.addEventListener('click', function () {
    document.querySelectorAll('button.tab').forEach(function (o) { o.setAttribute('aria-selected', o === b); });
    document.querySelectorAll('div.view').forEach(function (v) { v.hidden = v.id !== 'view-' + b.dataset.view; });
  });
});
document.getElementById('search').addEventListener('input', function (e) {
  query = e.target.value.trim().toLowerCase();
  Object.keys(DATA.boards).forEach(function (id) { DATA.boards[id].page = 0; draw(id); });
});
