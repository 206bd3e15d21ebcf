// Passkey pages: "Sign in with a passkey" on /login, and add, rename and remove on /profile/security.
// The WebAuthn ceremonies run through @simplewebauthn/browser (window.SimpleWebAuthnBrowser); every
// server call goes through serviceApi to the passkey actions.
document.addEventListener('DOMContentLoaded', function () {
  'use strict';
  var webauthn = window.SimpleWebAuthnBrowser;
  var api = window.serviceApi;
  var supported = !!(webauthn && webauthn.browserSupportsWebAuthn());

  // What to tell the user when a ceremony or a call fails.
  function describe(err) {
    var code = err && err.code;
    if (code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') return 'This device already holds one of your passkeys.';
    if (err && (err.name === 'NotAllowedError' || code === 'ERROR_CEREMONY_ABORTED' || (err.cause && err.cause.name === 'NotAllowedError'))) {
      return 'The passkey request was cancelled or timed out.';
    }
    return (err && err.message) || 'Something went wrong. Please try again.';
  }

  function show(el, text) {
    el.textContent = text;
    el.hidden = !text;
  }

  // Sign-in: a challenge for any passkey of this site, the browser's picker, then the server signs the
  // session in and we go where the visitor was headed.
  var signin = document.getElementById('passkey-signin');
  if (signin && supported) {
    var signinButton = document.getElementById('passkey-signin-button');
    var signinError = document.getElementById('passkey-signin-error');
    signin.hidden = false;
    signinButton.addEventListener('click', function () {
      signinButton.disabled = true;
      show(signinError, '');
      api.post('passkey_login_options', {})
        .then(function (options) { return webauthn.startAuthentication({ optionsJSON: options }); })
        .then(function (response) { return api.post('passkey_login_verify', response); })
        .then(function () { window.location.assign(signin.getAttribute('data-next') || '/'); })
        .catch(function (err) {
          signinButton.disabled = false;
          show(signinError, err && err.status === 401 ? 'That passkey could not sign you in. Try another one, or your password.' : describe(err));
        });
    });
  }

  var addForm = document.getElementById('add-passkey-form');
  if (!addForm) return;
  var status = document.getElementById('passkey-status');
  var addButton = document.getElementById('add-passkey-button');

  function done(what) {
    window.location.assign('/profile/security?done=' + encodeURIComponent(what));
  }

  function fail(err) {
    status.className = 'error';
    status.textContent = describe(err);
  }

  if (!supported) {
    addButton.disabled = true;
    status.textContent = 'This browser cannot use passkeys.';
  }

  // Confirms with one of the member's passkeys (the server then allows enrolling another for a while).
  function stepUp() {
    return api.post('passkey_stepup_options', {})
      .then(function (options) { return webauthn.startAuthentication({ optionsJSON: options }); })
      .then(function (response) { return api.post('passkey_stepup_verify', response); });
  }

  addForm.addEventListener('submit', function (event) {
    event.preventDefault();
    var password = document.getElementById('current_password');
    var label = document.getElementById('passkey_label').value.trim();
    var fieldError = document.getElementById('current_password-error');
    if (fieldError) fieldError.remove();
    status.textContent = '';
    addButton.disabled = true;
    var body = password ? { current_password: password.value } : {};
    api.post('passkey_register_options', body)
      .catch(function (err) {
        // A later passkey needs a recent step-up: confirm, then ask again.
        if (err.data && err.data.reason === 'stepup_required') {
          return stepUp().then(function () { return api.post('passkey_register_options', {}); });
        }
        throw err;
      })
      .then(function (options) { return webauthn.startRegistration({ optionsJSON: options }); })
      .then(function (response) {
        if (label) response.label = label;
        return api.post('passkey_register_verify', response);
      })
      .then(function () { done('added'); })
      .catch(function (err) {
        addButton.disabled = false;
        var message = err.validationErrors && err.validationErrors.current_password;
        if (message && password) {
          var el = document.createElement('div');
          el.className = 'field-error';
          el.id = 'current_password-error';
          el.setAttribute('role', 'alert');
          el.textContent = 'Current password ' + message + '.';
          password.insertAdjacentElement('afterend', el);
          password.focus();
          return;
        }
        fail(err);
      });
  });

  // Rename in place: the row's label turns into a small form.
  function rowOf(el) { return el.closest('tr[data-passkey-id]'); }
  function toggleRename(row, open) {
    row.querySelector('.passkey-label').hidden = open;
    row.querySelector('.rename-form').hidden = !open;
    if (open) row.querySelector('.rename-form input').focus();
  }

  var confirmBox = document.getElementById('remove-confirm');
  var pendingRemoval = null;

  document.addEventListener('click', function (event) {
    var target = event.target;
    if (!target.closest) return;
    if (target.closest('[data-rename]')) return toggleRename(rowOf(target), true);
    if (target.closest('[data-cancel-rename]')) return toggleRename(rowOf(target), false);
    if (target.closest('[data-remove]')) {
      pendingRemoval = rowOf(target);
      var name = pendingRemoval.querySelector('.passkey-label').textContent;
      document.getElementById('remove-confirm-text').textContent = 'Remove the passkey "' + name + '"? You will no longer be able to sign in with it.';
      confirmBox.hidden = false;
      document.getElementById('remove-confirm-yes').focus();
    }
  });

  document.addEventListener('submit', function (event) {
    var form = event.target;
    if (!form.classList || !form.classList.contains('rename-form')) return;
    event.preventDefault();
    var row = rowOf(form);
    var input = form.querySelector('input[name=label]');
    var save = form.querySelector('button[type=submit]');
    save.disabled = true;
    api.post('passkey_rename', { passkey_id: Number(row.getAttribute('data-passkey-id')), label: input.value })
      .then(function () { done('renamed'); })
      .catch(function (err) {
        save.disabled = false;
        fail(err.validationErrors && err.validationErrors.label ? { message: 'The name ' + err.validationErrors.label + '.' } : err);
      });
  });

  document.getElementById('remove-confirm-no').addEventListener('click', function () {
    confirmBox.hidden = true;
    if (pendingRemoval) pendingRemoval.querySelector('[data-remove]').focus();
    pendingRemoval = null;
  });
  document.getElementById('remove-confirm-yes').addEventListener('click', function () {
    if (!pendingRemoval) return;
    var id = Number(pendingRemoval.getAttribute('data-passkey-id'));
    confirmBox.hidden = true;
    pendingRemoval = null;
    api.post('passkey_revoke', { passkey_id: id })
      .catch(function (err) {
        // Removing a passkey needs a recent step-up too: confirm, then ask again.
        if (err.data && err.data.reason === 'stepup_required') {
          return stepUp().then(function () { return api.post('passkey_revoke', { passkey_id: id }); });
        }
        throw err;
      })
      .then(function () { done('removed'); })
      .catch(fail);
  });
});
