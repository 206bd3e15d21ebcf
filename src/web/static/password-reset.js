// The reset page: once the form holds the mailed code, the address bar and history forget it.
if (window.location.search.indexOf('act_code=') !== -1 && document.querySelector && window.history.replaceState) {
  window.history.replaceState(null, '', window.location.pathname);
}
