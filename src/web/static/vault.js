// The vault card on /profile/security: setup (recovery codes shown once, with a text download), unlock
// by passkey (WebAuthn PRF), recovery code or passphrase, lock and rotation, through serviceApi to the
// vault actions. While the vault is open it flags the session for the presence beacon (vault-beacon.js)
// and reloads when the beacon reports the window closed.
document.addEventListener('DOMContentLoaded', function () {
  'use strict';
  var card = document.getElementById('vault');
  if (!card) return;
  var api = window.serviceApi;
  var webauthn = window.SimpleWebAuthnBrowser;
  var status = document.getElementById('vault-status');

  function say(text, isError) {
    status.className = isError ? 'error' : '';
    status.textContent = text;
  }
  function fail(err) {
    var data = err && err.data;
    var fields = err && err.validationErrors;
    if (fields) {
      var first = Object.keys(fields)[0];
      say(first.replace(/_/g, ' ') + ' ' + fields[first], true);
    } else {
      say((err && err.message) || (data && data.reason) || 'Something went wrong. Please try again.', true);
    }
  }
  function reload() { window.location.assign('/profile/security'); }
  function field(form, name) { var el = form.elements[name]; return el ? el.value : ''; }

  function b64urlToBytes(s) {
    var b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4));
    var out = new Uint8Array(b.length);
    for (var i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
    return out;
  }
  function bytesToB64url(buf) {
    var bytes = new Uint8Array(buf), s = '';
    for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  // A passkey assertion that also evaluates the vault's PRF salt; resolves with the body for *_verify.
  function prfAssertion(options) {
    if (!webauthn) return Promise.reject(new Error('Passkeys are not supported in this browser.'));
    options.extensions = { prf: { eval: { first: b64urlToBytes(options.prf_salt) } } };
    return webauthn.startAuthentication({ optionsJSON: options }).then(function (response) {
      var prf = response.clientExtensionResults && response.clientExtensionResults.prf;
      var first = prf && prf.results && prf.results.first;
      if (!first) throw new Error('This passkey did not return a PRF result; use a recovery code.');
      response.clientExtensionResults = {};
      response.prf_output = bytesToB64url(first);
      return response;
    });
  }

  function showCodes(codes) {
    var list = document.getElementById('vault-code-list');
    list.textContent = '';
    codes.forEach(function (c) {
      var li = document.createElement('li');
      li.textContent = c.replace(/^(.{5})(.{5})(.{5})(.{5})(.{6})$/, '$1-$2-$3-$4-$5');
      list.appendChild(li);
    });
    var text = 'Gatehouse vault recovery codes (each works once)\n\n' + codes.join('\n') + '\n';
    document.getElementById('vault-codes-download').href = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    document.getElementById('vault-codes').hidden = false;
  }

  var setup = document.getElementById('vault-setup-form');
  if (setup) {
    setup.addEventListener('submit', function (e) {
      e.preventDefault();
      say('');
      var passphrase = field(setup, 'passphrase');
      var body = { acknowledge_loss: document.getElementById('vault_ack').checked };
      if (passphrase) body.passphrase = passphrase;
      api.post('vault_setup_options', { password: field(setup, 'password') })
        .then(function (options) {
          // With a PRF-capable passkey, the vault is also wrapped under it.
          if (!options.allowCredentials || options.allowCredentials.length === 0) return body;
          return prfAssertion(options).then(function (assertion) { return Object.assign(assertion, body); });
        })
        .then(function (b) { return api.post('vault_setup_verify', b); })
        .then(function (data) {
          setup.hidden = true;
          showCodes(data.recovery_codes);
        })
        .catch(fail);
    });
  }
  document.getElementById('vault-codes-done').addEventListener('click', reload);

  var unlockPasskey = document.getElementById('vault-unlock-passkey');
  if (unlockPasskey) {
    unlockPasskey.addEventListener('click', function () {
      say('');
      api.post('vault_unlock_options', {}).then(prfAssertion)
        .then(function (body) { return api.post('vault_unlock_passkey', body); })
        .then(reload).catch(fail);
    });
  }

  [['vault-unlock-recovery-form', 'vault_unlock_recovery', ['code', 'password']],
   ['vault-unlock-passphrase-form', 'vault_unlock_passphrase', ['passphrase', 'password']]].forEach(function (spec) {
    var form = document.getElementById(spec[0]);
    if (!form) return;
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      say('');
      var body = {};
      spec[2].forEach(function (n) { body[n] = field(form, n); });
      api.post(spec[1], body).then(reload).catch(fail);
    });
  });

  var lock = document.getElementById('vault-lock');
  if (lock) lock.addEventListener('click', function () { api.post('vault_lock', {}).then(reload).catch(fail); });

  var rotate = document.getElementById('vault-rotate-form');
  if (rotate) {
    rotate.addEventListener('submit', function (e) {
      e.preventDefault();
      say('');
      var password = rotate.elements.password;
      api.post('vault_rotate_options', {})
        .then(function (options) {
          if (password) return { password: password.value };
          return prfAssertion(options);
        })
        .then(function (body) { return api.post('vault_rotate_verify', body); })
        .then(function (data) {
          rotate.hidden = true;
          showCodes(data.recovery_codes);
        })
        .catch(fail);
    });
  }

  // The presence beacon (vault-beacon.js, on every signed-in page) runs while this flag says open.
  try {
    if (card.getAttribute('data-state') === 'open') window.sessionStorage.setItem('gatehouse-vault-open', '1');
    else window.sessionStorage.removeItem('gatehouse-vault-open');
  } catch (e) { /* no storage: no beacon */ }
  document.addEventListener('vault-closed', reload);
});
