// Registration page: submits through the shared serviceApi client and shows field errors in place.
document.addEventListener('DOMContentLoaded', function () {
  var form = document.getElementById('register-form');
  var result = document.getElementById('register-result');
  form.addEventListener('submit', function (ev) {
    ev.preventDefault();
    form.querySelectorAll('.field-error').forEach(function (el) { el.textContent = ''; });
    result.textContent = '';
    var body = {};
    new FormData(form).forEach(function (v, k) { body[k] = v; });
    window.serviceApi.post('register', body).then(function () {
      result.textContent = 'Your account is ready. You can sign in now.';
      form.reset();
    }, function (err) {
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
