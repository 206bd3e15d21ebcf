// Forms marked data-action post their fields to that action through the shared serviceApi client.
// A checkbox posts true or false, an empty choice of a select is left out, other fields post their text.
// The contract's validation errors land under their fields (.field-error[data-for=name]), the message in
// the form's .form-status; on success the page opens data-done (a same-origin path) or shows data-success
// (and with data-once, the form is spent).
document.addEventListener('DOMContentLoaded', function () {
  document.querySelectorAll('form[data-action]').forEach(function (form) {
    var status = form.querySelector('.form-status');
    var button = form.querySelector('button[type=submit]');
    form.addEventListener('submit', function (ev) {
      ev.preventDefault();
      form.querySelectorAll('.field-error').forEach(function (el) { el.textContent = ''; });
      status.textContent = '';
      status.className = 'form-status';
      var body = {};
      Array.prototype.forEach.call(form.elements, function (el) {
        if (!el.name || el.disabled || el.type === 'submit' || el.type === 'button') return;
        if (el.type === 'checkbox') body[el.name] = el.checked;
        else if (el.tagName === 'SELECT' && el.value === '') return;
        else body[el.name] = el.value;
      });
      button.disabled = true;
      window.serviceApi.post(form.getAttribute('data-action'), body).then(function () {
        var done = form.getAttribute('data-done');
        if (done && done.charAt(0) === '/' && done.charAt(1) !== '/') { window.location.assign(done); return; }
        button.disabled = false;
        status.textContent = form.getAttribute('data-success') || 'Saved.';
        if (form.hasAttribute('data-once')) Array.prototype.forEach.call(form.elements, function (el) { el.disabled = true; });
      }, function (err) {
        button.disabled = false;
        var fields = err.validationErrors || {};
        var elsewhere = [];
        Object.keys(fields).forEach(function (k) {
          var el = form.querySelector('.field-error[data-for="' + k + '"]');
          if (el) el.textContent = fields[k];
          else elsewhere.push(k + ' ' + fields[k]);
        });
        var marked = err.errorType === 'ValidationError' && elsewhere.length === 0 && Object.keys(fields).length > 0;
        status.textContent = marked ? 'Please correct the marked fields.' : err.message + (elsewhere.length ? ': ' + elsewhere.join('; ') : '');
        status.className = 'form-status error';
      });
    });
  });
});
