// Subscription page: each control asks for confirmation in the page, then calls its lifecycle action
// through serviceApi and reloads the page with the result; a refusal is shown as the server worded it.
document.addEventListener('DOMContentLoaded', function () {
  var panel = document.getElementById('confirm');
  var text = document.getElementById('confirm-text');
  var yes = document.getElementById('confirm-yes');
  var no = document.getElementById('confirm-no');
  var result = document.getElementById('result');
  var pending = null;

  function run(button) {
    var buttons = document.querySelectorAll('button[data-action]');
    for (var i = 0; i < buttons.length; i++) buttons[i].disabled = true;
    result.textContent = '';
    window.serviceApi.post(button.getAttribute('data-action'), JSON.parse(button.getAttribute('data-body'))).then(function (data) {
      // A wallet-billed plan change may need the payer's approval on the provider's site first.
      if (data && data.approval_url) return window.location.assign(data.approval_url);
      // Refunded, but the provider would not cancel: the page says exactly that.
      if (data && data.cancelled === false) return window.location.assign('/profile/subscription?done=not_cancelled');
      var next = button.getAttribute('data-next');
      window.location.assign(next || '/profile/subscription?done=' + encodeURIComponent(button.getAttribute('data-done')));
    }, function (err) {
      for (var i = 0; i < buttons.length; i++) buttons[i].disabled = false;
      result.textContent = err.message;
    });
  }

  document.addEventListener('click', function (event) {
    var button = event.target.closest && event.target.closest('button[data-action]');
    if (!button) return;
    var question = button.getAttribute('data-confirm');
    if (!question) return run(button);
    pending = button;
    text.textContent = question;
    panel.hidden = false;
    yes.focus();
  });
  yes.addEventListener('click', function () {
    panel.hidden = true;
    if (pending) run(pending);
    pending = null;
  });
  no.addEventListener('click', function () {
    panel.hidden = true;
    if (pending) pending.focus();
    pending = null;
  });
});
