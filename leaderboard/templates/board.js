// The leaderboard's boards: every row travels once as JSON (#board-data), as the HTML the server rendered with the
// page's own row template (board_row.html.j2, autoescaped) and the sort key of each of its columns (the cells'
// data-v). Only the page in view is drawn, sorted and filtered over all rows; the script never builds a cell itself.
var DATA = JSON.parse(document.getElementById('board-data').textContent);
var query = '', reproducedOnly = false;
function draw(id) {
  var b = DATA.boards[id], table = document.getElementById(id), body = table.tBodies[0];
  var rows = b.order.map(function (i) { return DATA.rows[i]; }).filter(function (r) {
    return (query === '' || r.name.toLowerCase().indexOf(query) >= 0) && (!reproducedOnly || r.tier === 'reproduced');
  });
  if (b.col !== null) {
    rows.sort(function (p, q) {
      var x = p.views[b.view].keys[b.col], y = q.views[b.view].keys[b.col];
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
  body.innerHTML = shown.map(function (r) { return r.views[b.view].html; }).join('');  // rendered by the server
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
function redraw() { Object.keys(DATA.boards).forEach(function (id) { DATA.boards[id].page = 0; draw(id); }); }
document.getElementById('search').addEventListener('input', function (e) {
  query = e.target.value.trim().toLowerCase();
  redraw();
});
document.getElementById('reproduced-only').addEventListener('change', function (e) {
  reproducedOnly = e.target.checked;  // rank by the rows whose outputs are known to be their model's
  redraw();
});
