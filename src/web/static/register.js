// Registration page: submits through the shared serviceApi client (which sends this page's session, so the
// new member is signed in) and shows field errors in place; then goes on to the form's data-next, a
// same-origin path the server chose.
document.addEventListener('DOMContentLoaded', function () {
  var form = document.getElementById('register-form');
  var result = document.getElementById('register-result');
  var button = form.querySelector('button[type=submit]');
  form.addEventListener('submit', function (ev) {
    ev.preventDefault();
    form.querySelectorAll('.field-error').forEach(function (el) { el.textContent = ''; });
    result.textContent = '';
    result.className = '';
    var body = {};
    new FormData(form).forEach(function (v, k) { body[k] = v; });
    button.disabled = true;
    window.serviceApi.post('register', body).then(function (data) {
      result.textContent = 'Your account is ready.';
      var next = form.getAttribute('data-next') || '/pricing';
      // Only a path on this site (the server already refused anything else).
      if (data && data.signed_in && next.charAt(0) === '/' && next.charAt(1) !== '/') window.location.assign(next);
      else { result.textContent = 'Your account is ready. You can sign in now.'; form.reset(); button.disabled = false; }
    }, function (err) {
      button.disabled = false;
      var fields = err.validationErrors || {};
      Object.keys(fields).forEach(function (k) {
        var el = form.querySelector('.field-error[data-for="' + k + '"]');
        if (el) el.textContent = fields[k];
      });
      result.textContent = err.message;
      result.className = 'error';
    });
  });
});
