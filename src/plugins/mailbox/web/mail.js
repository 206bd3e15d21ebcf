// /mail: the mailbox page. Everything goes through the mailbox/* actions (serviceApi); compose with
// attachments posts multipart/form-data to mailbox/send with the same CSRF token. Content arrives as the
// `(locked)` placeholders while the vault is locked; the page then shows the unlock prompt.
(function () {
  'use strict';
  var LIMITS = { files: 10, fileBytes: 10000000, totalBytes: 25000000 };
  var view = document.getElementById('mail-view');
  var result = document.getElementById('mail-result');
  var banner = document.getElementById('locked-banner');
  var state = { mailbox: null };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === 'text') node.textContent = attrs[k];
      else if (k === 'class') node.className = attrs[k];
      else if (k.slice(0, 2) === 'on') node.addEventListener(k.slice(2), attrs[k]);
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return node;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function show(nodes) { clear(view); nodes.forEach(function (n) { if (n) view.appendChild(n); }); }
  function fail(err) { result.textContent = (err && err.message) || 'Something went wrong.'; }
  // Sizes in decimal units, as formatBytes in src/lib/byte-size.ts shows them everywhere else (1 MB = 1,000,000 bytes).
  function bytes(n) {
    var units = [['B', 1], ['kB', 1e3], ['MB', 1e6], ['GB', 1e9], ['TB', 1e12]];
    var fmt = new Intl.NumberFormat('en', { maximumFractionDigits: 1, useGrouping: false });
    var i = 0;
    while (i < units.length - 1 && n >= units[i + 1][1]) i++;
    var shown = fmt.format(n / units[i][1]);
    if (Number(shown) >= 1000 && i < units.length - 1) shown = fmt.format(n / units[++i][1]);
    return shown + ' ' + units[i][0];
  }
  function setLocked(locked) { banner.hidden = !locked; }
  function hashParams() {
    var out = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (p) { var kv = p.split('='); if (kv[0]) out[kv[0]] = decodeURIComponent(kv[1] || ''); });
    return out;
  }
  function markFolder(name) {
    document.querySelectorAll('#mail nav.folders a[data-folder]').forEach(function (a) {
      if (a.getAttribute('data-folder') === name) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    });
  }

  function act(threadId, action, extra) {
    var body = Object.assign({ thread_id: threadId, action: action }, extra || {});
    return serviceApi.post('mailbox/thread_action', body);
  }

  function threadRow(t) {
    var star = el('button', { type: 'button', class: 'star' + (t.starred ? ' on' : ''), 'aria-label': t.starred ? 'Unstar' : 'Star', text: t.starred ? '★' : '☆',
      onclick: function (e) { e.stopPropagation(); act(t.thread_id, t.starred ? 'unstar' : 'star').then(route, fail); } });
    var labels = t.labels.map(function (l) { return el('span', { class: 'label', text: l }); });
    var count = t.message_count > 1 ? ' (' + t.message_count + ')' : '';
    var li = el('li', { class: t.unread_count > 0 ? 'unread' : '', 'data-thread-id': String(t.thread_id), tabindex: '0', onclick: function () { location.hash = 'thread=' + t.thread_id; } }, [
      star,
      el('span', { class: 'who', text: t.sender + count }),
      el('span', { class: 'line' }, labels.concat([el('span', { class: 'subject', text: t.subject || '(no subject)' }), el('span', { class: 'snippet', text: t.snippet ? ' — ' + t.snippet : '' })])),
      el('span', { class: 'meta', text: t.last_message_time.slice(0, 16) + ' · ' + bytes(t.size_bytes) + (t.attachment_count ? ' · ' + t.attachment_count + (t.attachment_count === 1 ? ' file' : ' files') : '') }),
    ]);
    li.addEventListener('keydown', function (e) { if (e.key === 'Enter') location.hash = 'thread=' + t.thread_id; });
    return li;
  }

  function list(folder) {
    markFolder(folder);
    var body = { mailbox_id: state.mailbox.mailbox_id, limit: 100 };
    if (folder === 'starred') body.starred = true; else body.folder = folder;
    return serviceApi.post('mailbox/thread_list', body).then(function (data) {
      setLocked(data.locked || state.mailbox.locked);
      var items = data.threads.map(threadRow);
      show([
        el('h2', { text: folder.charAt(0).toUpperCase() + folder.slice(1) + ' (' + data.total + ')' }),
        items.length ? el('ul', { class: 'threads', id: 'thread-list' }, items) : el('p', { class: 'help', id: 'mail-empty', text: 'No conversations here.' }),
      ]);
    });
  }

  function timeline(messageId, holder) {
    return serviceApi.post('mailbox/message_timeline', { message_id: messageId }).then(function (data) {
      clear(holder);
      data.events.forEach(function (e) { holder.appendChild(el('li', { text: (e.time || '—') + ' · ' + e.kind + ' · ' + e.title + (e.detail ? ': ' + e.detail : '') })); });
      data.notes.forEach(function (n) { holder.appendChild(el('li', { text: n })); });
    });
  }

  function thread(id) {
    markFolder('');
    return serviceApi.post('mailbox/thread', { thread_id: id }).then(function (data) {
      var t = data.thread;
      setLocked(data.locked);
      if (t.unread_count > 0) act(id, 'read').catch(function () {});
      var labelInput = el('input', { type: 'text', placeholder: 'Label', 'aria-label': 'Label', maxlength: '64', style: 'width:auto' });
      var actions = el('div', { class: 'actions' }, [
        el('button', { type: 'button', class: 'secondary', text: '← Back', onclick: function () { history.back(); } }),
        el('button', { type: 'button', class: 'secondary', text: 'Reply', onclick: function () { location.hash = 'compose&thread=' + id; } }),
        el('button', { type: 'button', class: 'secondary', text: 'Mark unread', onclick: function () { act(id, 'unread').then(function () { location.hash = 'folder=inbox'; }, fail); } }),
        el('button', { type: 'button', class: 'secondary', text: t.starred ? 'Unstar' : 'Star', onclick: function () { act(id, t.starred ? 'unstar' : 'star').then(route, fail); } }),
        el('button', { type: 'button', class: 'secondary', text: 'Archive', onclick: function () { act(id, 'move', { folder: 'archive' }).then(function () { location.hash = 'folder=inbox'; }, fail); } }),
        el('button', { type: 'button', class: 'secondary', text: 'Delete', onclick: function () { act(id, 'delete').then(function () { location.hash = 'folder=inbox'; }, fail); } }),
        el('form', { style: 'display:flex;gap:.4rem;margin:0', onsubmit: function (e) { e.preventDefault(); if (labelInput.value.trim()) act(id, 'label', { label: labelInput.value.trim() }).then(route, fail); } }, [labelInput, el('button', { type: 'submit', class: 'secondary', text: 'Add label' })]),
      ]);
      var messages = data.messages.map(function (m) {
        var holder = el('ul', { class: 'timeline', hidden: '' });
        return el('article', { class: 'message', 'data-message-id': String(m.message_id) }, [
          el('div', { class: 'head' }, [
            el('span', {}, [el('strong', { text: m.sender }), ' → ' + m.recipients]),
            el('span', { text: m.time + ' · ' + bytes(m.size_bytes) + (m.attachment_count ? ' · ' + m.attachment_count + ' attachment(s)' : '') }),
          ]),
          el('h3', { text: m.subject || '(no subject)' }),
          el('pre', { text: m.body }),
          el('button', { type: 'button', class: 'link', text: 'Delivery timeline', onclick: function () { holder.hidden = !holder.hidden; if (!holder.hidden) timeline(m.message_id, holder).catch(fail); } }),
          holder,
        ]);
      });
      var labels = t.labels.map(function (l) { return el('span', { class: 'label', text: l }); });
      show([actions, el('p', {}, labels), el('div', { id: 'thread-messages' }, messages)]);
    });
  }

  function compose(threadId) {
    markFolder('');
    var to = el('input', { type: 'text', id: 'compose-to', name: 'to', required: '', placeholder: 'name@example.com, other@example.com' });
    var subject = el('input', { type: 'text', id: 'compose-subject', name: 'subject', maxlength: '998' });
    var text = el('textarea', { id: 'compose-body', name: 'body' });
    var files = el('input', { type: 'file', id: 'compose-files', multiple: '' });
    var note = el('p', { class: 'help', id: 'compose-note', text: 'Up to 10 files, 10 MB each, 25 MB together.' });
    var form = el('form', { class: 'compose', id: 'compose-form', onsubmit: function (e) { e.preventDefault(); send(); } }, [
      el('h2', { text: threadId ? 'Reply' : 'New message' }),
      el('label', { for: 'compose-to', text: 'To' }), to,
      el('label', { for: 'compose-subject', text: 'Subject' }), subject,
      el('label', { for: 'compose-body', text: 'Message' }), text,
      el('label', { for: 'compose-files', text: 'Attachments' }), files, note,
      el('button', { type: 'submit', class: 'primary', id: 'compose-send', text: 'Send' }),
    ]);
    function send() {
      result.textContent = '';
      var chosen = Array.prototype.slice.call(files.files || []);
      var total = chosen.reduce(function (n, f) { return n + f.size; }, 0);
      if (chosen.length > LIMITS.files || chosen.some(function (f) { return f.size > LIMITS.fileBytes; }) || total > LIMITS.totalBytes) {
        result.textContent = 'Attachments: at most 10 files, 10 MB each, 25 MB together.';
        return;
      }
      var data = new FormData();
      data.append('to', to.value);
      data.append('subject', subject.value);
      data.append('body', text.value);
      data.append('mailbox_id', String(state.mailbox.mailbox_id));
      if (threadId) data.append('thread_id', String(threadId));
      chosen.forEach(function (f) { data.append('attachments[]', f, f.name); });
      fetch('/api/v1/action/mailbox/send', { method: 'POST', credentials: 'same-origin', headers: { accept: 'application/json', 'x-service-csrf': serviceApi.csrf() }, body: data })
        .then(function (res) { return res.json().then(function (env) { return { ok: res.ok, env: env }; }); })
        .then(function (r) {
          if (!r.ok || r.env.errortype) {
            var v = r.env.validation_errors;
            throw new Error(v ? Object.keys(v).map(function (k) { return k + ': ' + v[k]; }).join('; ') : r.env.error);
          }
          if (r.env.data.locked) {
            setLocked(true);
            note.textContent = 'Not sent: this Fortress mailbox sends only while your vault is unlocked.';
            note.className = 'error';
            return;
          }
          location.hash = 'thread=' + r.env.data.thread_id;
        })
        .catch(fail);
    }
    show([form]);
    return Promise.resolve();
  }

  function route() {
    result.textContent = '';
    var p = hashParams();
    var go = p.thread && 'compose' in p ? compose(Number(p.thread)) : 'compose' in p ? compose(null) : p.thread ? thread(Number(p.thread)) : list(p.folder || 'inbox');
    return go.catch(fail);
  }

  serviceApi.post('mailbox/mailboxes', {}).then(function (data) {
    state.mailbox = data.mailboxes[0];
    document.getElementById('mail-address').textContent = state.mailbox.address + ' · ' + state.mailbox.security_level;
    setLocked(state.mailbox.locked);
    window.addEventListener('hashchange', route);
    return route();
  }).catch(fail);
})();
