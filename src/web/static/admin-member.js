// Admin member page: "Resync billing" calls store_resync through serviceApi and shows what it did.
document.addEventListener('DOMContentLoaded', function () {
  var button = document.getElementById('resync');
  var result = document.getElementById('resync-result');
  if (!button) return;
  button.addEventListener('click', function () {
    button.disabled = true;
    result.textContent = '';
    window.serviceApi.post(button.getAttribute('data-action'), JSON.parse(button.getAttribute('data-body'))).then(function (data) {
      var parts = ['Checked ' + data.checked, data.applied + ' repaired'];
      if (data.unreachable.length) parts.push(data.unreachable.length + ' could not be read from the provider (nothing about them changed)');
      result.textContent = parts.join('; ') + '.';
      button.disabled = false;
    }, function (err) {
      result.textContent = err.message;
      button.disabled = false;
    });
  });
});
