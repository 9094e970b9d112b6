document.querySelectorAll('.fig input[data-line]').forEach(function (box) {
  box.addEventListener('change', function () {
    var line = document.getElementById(box.getAttribute('data-line'));
    if (box.checked) { line.removeAttribute('data-hidden'); } else { line.setAttribute('data-hidden', ''); }
  });
});
