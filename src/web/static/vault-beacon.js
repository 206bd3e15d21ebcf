// The vault presence beacon (SPEC Events 3): while this browser session has an open vault window (the
// vault card marks it in sessionStorage), every signed-in page posts vault_heartbeat about every 25 s;
// it stops, and tells the page with a 'vault-closed' event, once the server answers {alive: false}.
document.addEventListener('DOMContentLoaded', function () {
  'use strict';
  var FLAG = 'gatehouse-vault-open';
  var api = window.serviceApi;
  var store;
  try { store = window.sessionStorage; } catch (e) { return; }
  if (!api || !store || store.getItem(FLAG) !== '1') return;
  var beat = window.setInterval(function () {
    api.post('vault_heartbeat', {}).then(function (data) {
      if (data.alive) return;
      window.clearInterval(beat);
      store.removeItem(FLAG);
      document.dispatchEvent(new CustomEvent('vault-closed'));
    }).catch(function () {});
  }, 25000);
});
