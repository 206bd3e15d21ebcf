// Pricing page: "Choose" puts the plan in the cart through the shared serviceApi client, then opens the cart.
document.addEventListener('click', function (e) {
  var button = e.target.closest && e.target.closest('button.choose');
  if (!button) return;
  var result = document.getElementById('pricing-result');
  button.disabled = true;
  result.textContent = '';
  window.serviceApi.post('cart', { product_id: Number(button.getAttribute('data-product')) }).then(function () {
    window.location.assign('/cart');
  }, function (err) {
    button.disabled = false;
    result.textContent = err.message;
  });
});
