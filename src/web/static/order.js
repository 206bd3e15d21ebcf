// Order page: while the payment provider has not confirmed the order yet, look again every few seconds
// (for about two minutes; the page says what to do meanwhile).
document.addEventListener('DOMContentLoaded', function () {
  var order = document.getElementById('order');
  if (!order || order.getAttribute('data-order-status') !== 'pending') return;
  var key = 'order-wait:' + window.location.pathname;
  var tries = Number(window.sessionStorage.getItem(key) || 0);
  if (tries >= 40) return;
  window.sessionStorage.setItem(key, String(tries + 1));
  setTimeout(function () { window.location.reload(); }, 3000);
});
