// Cart page: empties the cart through the shared serviceApi client, then reloads.
document.addEventListener('DOMContentLoaded', function () {
  var button = document.getElementById('cart-clear');
  if (!button) return;
  button.addEventListener('click', function () {
    window.serviceApi.post('cart_clear', {}).then(function () {
      window.location.reload();
    }, function (err) {
      document.getElementById('cart-result').textContent = err.message;
    });
  });
});
