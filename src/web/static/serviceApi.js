// serviceApi: the one client transport for page scripts.
//   serviceApi.post(actionName, body, options) -> Promise of the envelope's data; rejects with an Error
//   carrying status, errorType (the contract's errortype), data and validationErrors. options.headers
//   adds request headers (e.g. an Idempotency-Key).
//   serviceApi.csrf() -> the session-wide CSRF token.
// Names may be an action ('register'), a plugin action ('mailbox/send') or a full endpoint URL/path.
// On a 403 AuthenticationError it re-reads the mirror cookie and, if the token changed, retries once.
(function () {
  'use strict';

  function readCookie(name) {
    var parts = document.cookie ? document.cookie.split('; ') : [];
    for (var i = 0; i < parts.length; i++) {
      var eq = parts[i].indexOf('=');
      if (parts[i].slice(0, eq) === name) return decodeURIComponent(parts[i].slice(eq + 1));
    }
    return null;
  }

  function initialToken() {
    var meta = document.querySelector('meta[name="service-api-csrf"]');
    return (meta && meta.getAttribute('content')) || readCookie('service_api_csrf') || '';
  }

  var token = initialToken();

  function endpoint(name) {
    if (/^https?:\/\//i.test(name) || name.charAt(0) === '/') return name;
    return '/api/v1/action/' + name.split('/').map(encodeURIComponent).join('/');
  }

  function send(url, body, extra) {
    var headers = { 'content-type': 'application/json', accept: 'application/json', 'x-service-csrf': token };
    Object.keys(extra || {}).forEach(function (k) { headers[k] = extra[k]; });
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: headers,
      body: JSON.stringify(body === undefined ? {} : body),
    }).then(function (res) {
      return res.text().then(function (text) {
        var envelope = null;
        try { envelope = text ? JSON.parse(text) : null; } catch (e) { envelope = null; }
        return { res: res, envelope: envelope };
      });
    });
  }

  function failure(res, envelope) {
    var err = new Error((envelope && envelope.error) || 'Request failed with status ' + res.status);
    err.status = res.status;
    err.errorType = (envelope && envelope.errortype) || null;
    err.data = (envelope && envelope.data) || {};
    err.validationErrors = (envelope && envelope.validation_errors) || null;
    return err;
  }

  function post(name, body, options) {
    var url = endpoint(name);
    var extra = (options && options.headers) || null;
    return send(url, body, extra).then(function (first) {
      var stale = first.res.status === 403 && first.envelope && first.envelope.errortype === 'AuthenticationError';
      if (stale) {
        var fresh = readCookie('service_api_csrf');
        if (fresh && fresh !== token) {
          token = fresh;
          return send(url, body, extra);
        }
      }
      return first;
    }).then(function (r) {
      if (r.res.ok && r.envelope && !r.envelope.errortype) return r.envelope.data;
      throw failure(r.res, r.envelope);
    });
  }

  window.serviceApi = { post: post, csrf: function () { return token; } };
})();
