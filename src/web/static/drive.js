// Drive page: every change goes through the shared serviceApi client (the drive_* actions), and uploads
// through the chunk endpoints (PUT /api/v1/drive_upload/{token} with Content-Range). A chunk that fails
// (a dropped connection, a lost answer) is recovered by asking the server how much it holds
// (GET /api/v1/drive_upload/{token} -> received_bytes) and continuing from there; a 409 chunk_in_progress
// (a chunk of it still held elsewhere, e.g. by a server that went away) is waited out for as long as the
// server says (retry_after). An upload under way is kept in sessionStorage (its token and Idempotency-Key),
// so after a reload the page offers to continue it from the server's offset once the member picks the
// same file again; completion carries the Idempotency-Key, so a lost answer is asked again safely. After a
// change the page reloads, so the listing is always the server's.
document.addEventListener('DOMContentLoaded', function () {
  'use strict';
  var root = document.getElementById('drive');
  if (!root) return;
  var folderId = root.getAttribute('data-folder-id') ? Number(root.getAttribute('data-folder-id')) : null;
  var result = document.getElementById('result');
  // Connection failures in a row before an upload gives up (backoff up to 8 s: about a minute in all,
  // enough for a server to restart).
  var MAX_ATTEMPTS = 12;
  // The longest the page waits, in all, for other requests of one upload to let go (chunk_in_progress).
  var MAX_WAIT_SECONDS = 600;

  function say(message) {
    result.textContent = message || '';
  }

  // The server's words for a refusal: the message, and for invalid input what is wrong with each field.
  function explain(err) {
    if (!err || !err.message) return String(err);
    var fields = err.validationErrors || {};
    var details = Object.keys(fields).map(function (k) {
      var text = String(fields[k]);
      // Messages that name their subject read on their own ("there is no member ..."); others get the field.
      return /^(there|the|give|must name)/.test(text) ? text.charAt(0).toUpperCase() + text.slice(1) : k.replace(/_/g, ' ') + ' ' + text;
    });
    return details.length > 0 ? details.join('. ') + '.' : err.message;
  }

  function fail(err) {
    say(explain(err));
  }

  function reloadWith(done) {
    var url = new URL(window.location.href);
    if (done) url.searchParams.set('done', done);
    else url.searchParams.delete('done');
    window.location.assign(url.toString());
  }

  function target(el) {
    var item = el.closest('[data-kind]');
    var kind = item.getAttribute('data-kind');
    var id = Number(item.getAttribute('data-id'));
    return {
      kind: kind,
      id: id,
      name: item.getAttribute('data-name'),
      canEdit: item.getAttribute('data-can-edit') === '1',
      key: kind === 'folder' ? { folder_id: id } : { file_id: id },
    };
  }

  // A copy of formatBytes in src/lib/byte-size.ts (decimal units, 1 GB = 1,000,000,000 bytes); a unit
  // test holds the two to the same output.
  // formatBytes:start
  function formatBytes(n) {
    var units = [['B', 1], ['kB', 1e3], ['MB', 1e6], ['GB', 1e9], ['TB', 1e12]];
    var fmt = new Intl.NumberFormat('en', { maximumFractionDigits: 1, useGrouping: false });
    var sign = n < 0 ? '-' : '';
    var a = Math.abs(n);
    var i = 0;
    while (i < units.length - 1 && a >= units[i + 1][1]) i++;
    var shown = fmt.format(a / units[i][1]);
    if (Number(shown) >= 1000 && i < units.length - 1) shown = fmt.format(a / units[++i][1]);
    return sign + shown + ' ' + units[i][0];
  }
  // formatBytes:end

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === 'text') node.textContent = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { node.appendChild(c); });
    return node;
  }

  // ---- Dialogs -------------------------------------------------------------------------------------
  var openDialog = null;
  function showDialog(id) {
    closeDialog();
    openDialog = document.getElementById(id);
    openDialog.hidden = false;
    var first = openDialog.querySelector('input, select, button');
    if (first) first.focus();
  }
  function closeDialog() {
    if (openDialog) openDialog.hidden = true;
    openDialog = null;
  }
  Array.prototype.forEach.call(document.querySelectorAll('[data-close]'), function (b) {
    b.addEventListener('click', closeDialog);
  });
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Escape') closeDialog();
  });

  // ---- Uploads -------------------------------------------------------------------------------------
  var bar = document.getElementById('upload-progress');
  var barText = document.getElementById('upload-text');
  var panel = document.getElementById('upload-panel');

  function progress(done, total) {
    bar.max = total || 1;
    bar.value = done;
    var pct = total ? Math.floor((done / total) * 100) : 100;
    barText.textContent = pct + '% (' + formatBytes(done) + ' of ' + formatBytes(total) + ')';
  }

  function csrfHeaders() {
    return { 'x-service-csrf': window.serviceApi.csrf(), accept: 'application/json' };
  }

  function uploadUrl(token) {
    return '/api/v1/drive_upload/' + encodeURIComponent(token);
  }

  // Uploads under way in this tab, kept across a reload: [{token, name, size, type, lastModified, into,
  // chunk, key}]. key is the completion's Idempotency-Key.
  var STORE_KEY = 'gatehouse.drive.uploads';
  function pendingUploads() {
    try {
      var list = JSON.parse(window.sessionStorage.getItem(STORE_KEY) || '[]');
      return Array.isArray(list) ? list : [];
    } catch (e) {
      return [];
    }
  }
  function savePending(list) {
    try { window.sessionStorage.setItem(STORE_KEY, JSON.stringify(list)); } catch (e) { /* storage full or off: no resume */ }
  }
  function remember(entry) {
    savePending(pendingUploads().filter(function (e) { return e.token !== entry.token; }).concat([entry]));
  }
  function forget(token) {
    savePending(pendingUploads().filter(function (e) { return e.token !== token; }));
  }
  function newKey() {
    if (window.crypto && window.crypto.randomUUID) return window.crypto.randomUUID();
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ('0' + b.toString(16)).slice(-2); }).join('');
  }

  // One chunk [start, end) as a PUT; resolves with the server's received_bytes.
  function putChunk(token, file, start, end) {
    return new Promise(function (resolve, reject) {
      var xhr = new XMLHttpRequest();
      xhr.open('PUT', uploadUrl(token));
      var headers = csrfHeaders();
      Object.keys(headers).forEach(function (k) { xhr.setRequestHeader(k, headers[k]); });
      xhr.setRequestHeader('content-type', 'application/octet-stream');
      xhr.setRequestHeader('content-range', 'bytes ' + start + '-' + (end - 1) + '/' + file.size);
      xhr.upload.onprogress = function (e) { progress(start + e.loaded, file.size); };
      xhr.onload = function () {
        var body = null;
        try { body = JSON.parse(xhr.responseText); } catch (e) { body = null; }
        if (xhr.status >= 200 && xhr.status < 300) {
          var got = body && body.data && typeof body.data.received_bytes === 'number' ? body.data.received_bytes : end;
          return resolve(got);
        }
        var err = new Error((body && body.error) || 'Upload failed with status ' + xhr.status);
        err.status = xhr.status;
        err.data = (body && body.data) || {};
        err.retryAfter = Number(xhr.getResponseHeader('retry-after')) || 0;
        reject(err);
      };
      xhr.onerror = function () { reject(new Error('The connection was lost')); };
      xhr.ontimeout = xhr.onerror;
      xhr.send(file.slice(start, end));
    });
  }

  function receivedBytes(token) {
    return fetch(uploadUrl(token), { credentials: 'same-origin', headers: csrfHeaders() }).then(function (res) {
      return res.json().then(function (body) {
        if (!res.ok) {
          var err = new Error(body.error || 'The upload is no longer available');
          err.status = res.status;
          throw err;
        }
        return body.data.received_bytes;
      });
    });
  }

  function wait(ms) {
    return new Promise(function (resolve) { setTimeout(resolve, ms); });
  }

  // Seconds the server asked us to wait (data.retry_after, data.retry_after_seconds or Retry-After).
  function serverWait(err) {
    var data = err.data || {};
    var s = Number(data.retry_after) || Number(data.retry_after_seconds) || Number(err.retryAfter) || 1;
    return Math.min(Math.max(s, 1), 120);
  }

  // Sends every chunk from `offset`; a failure asks the server where it stands and goes on from there.
  function sendFrom(token, file, chunk, offset, attempts, waited) {
    waited = waited || 0;
    if (offset >= file.size) return Promise.resolve();
    var end = Math.min(offset + chunk, file.size);
    return putChunk(token, file, offset, end).then(function (got) {
      return sendFrom(token, file, chunk, got, 0, waited);
    }, function (err) {
      // 409 chunk_in_progress: another request of this upload still holds it (one cut off mid-chunk, on a
      // server that may have gone away): wait as long as the server says, then go on from where it stands.
      if (err.status === 409 && err.data.reason === 'chunk_in_progress' && waited < MAX_WAIT_SECONDS) {
        var secs = serverWait(err);
        barText.textContent = 'Waiting ' + secs + ' s for the server to let go of an earlier request…';
        var from = typeof err.data.received_bytes === 'number' ? err.data.received_bytes : offset;
        return wait(secs * 1000).then(function () { return sendFrom(token, file, chunk, from, attempts, waited + secs); });
      }
      if (attempts + 1 >= MAX_ATTEMPTS) throw err;
      // 409: the server holds a different amount than we sent from (an answer that never arrived); it says
      // how much it holds.
      if (err.status === 409 && typeof err.data.received_bytes === 'number') {
        return sendFrom(token, file, chunk, err.data.received_bytes, attempts + 1, waited);
      }
      // 408: the chunk stalled and was discarded; anything else below 500 (but 429) will not get better.
      if (err.status && err.status !== 408 && err.status !== 429 && err.status < 500) throw err;
      barText.textContent = 'Connection lost; resuming…';
      var pause = err.status === 429 ? serverWait(err) * 1000 : Math.min(8000, 250 * Math.pow(2, attempts));
      return wait(pause).then(function () {
        return receivedBytes(token);
      }).then(function (got) {
        return sendFrom(token, file, chunk, got, attempts + 1, waited);
      }, function (statusErr) {
        if (statusErr.status === 404) throw statusErr;
        return sendFrom(token, file, chunk, offset, attempts + 1, waited);
      });
    });
  }

  // Completes with the upload's Idempotency-Key: a lost answer, a server going away or the first request
  // still running (409) is asked again with the same key, which answers what the first one did.
  function complete(entry, attempts) {
    attempts = attempts || 0;
    return window.serviceApi.post('drive_upload_complete', { upload_token: entry.token }, { headers: { 'idempotency-key': entry.key } }).catch(function (err) {
      var data = err.data || {};
      var running = err.status === 409 && (data.in_progress === true || data.reason === 'idempotency_key_reused');
      var lost = !err.status || err.status >= 500 || err.status === 429;
      if ((!running && !lost) || attempts + 1 >= MAX_ATTEMPTS) throw err;
      barText.textContent = 'Finishing…';
      var pause = running || err.status === 429 ? serverWait(err) * 1000 : Math.min(8000, 250 * Math.pow(2, attempts));
      return wait(pause).then(function () { return complete(entry, attempts + 1); });
    });
  }

  // Sends the rest of a remembered upload from `offset` and completes it; forgets it once it is done or gone.
  function finish(entry, file, offset) {
    panel.hidden = false;
    document.getElementById('upload-name').textContent = file.name;
    progress(offset, file.size);
    return sendFrom(entry.token, file, entry.chunk, offset, 0).then(function () {
      return complete(entry);
    }).then(function (done) {
      forget(entry.token);
      progress(file.size, file.size);
      return done;
    }, function (err) {
      if (err && err.status === 404) forget(entry.token);
      throw err;
    });
  }

  // Files up to this size are hashed first: the server then checks the bytes it assembled against it,
  // and content the member already has is not sent again. Larger ones are not read whole into memory.
  var HASH_LIMIT = 32 * 1024 * 1024;

  function sha256Of(file) {
    if (file.size > HASH_LIMIT || !window.crypto || !window.crypto.subtle || !file.arrayBuffer) return Promise.resolve(null);
    return file.arrayBuffer().then(function (buf) {
      return window.crypto.subtle.digest('SHA-256', buf);
    }).then(function (digest) {
      return Array.prototype.map.call(new Uint8Array(digest), function (b) { return ('0' + b.toString(16)).slice(-2); }).join('');
    }, function () { return null; });
  }

  function upload(file, into) {
    panel.hidden = false;
    document.getElementById('upload-name').textContent = file.name;
    progress(0, file.size);
    var init = { name: file.name, size_bytes: file.size, mime_type: file.type || 'application/octet-stream' };
    Object.keys(into).forEach(function (k) { if (into[k] !== null) init[k] = into[k]; });
    return sha256Of(file).then(function (sha256) {
      if (sha256) init.sha256 = sha256;
      return window.serviceApi.post('drive_upload_init', init);
    }).then(function (started) {
      if (started.deduped) return started;
      var entry = {
        token: started.upload_token,
        name: file.name,
        size: file.size,
        type: file.type || '',
        lastModified: file.lastModified || 0,
        into: into,
        chunk: started.chunk_bytes,
        key: newKey(),
      };
      remember(entry);
      return finish(entry, file, 0);
    }).then(function () {
      progress(file.size, file.size);
    });
  }

  var input = document.getElementById('upload-input');
  if (input) {
    input.addEventListener('change', function () {
      var files = Array.prototype.slice.call(input.files);
      if (files.length === 0) return;
      say('');
      input.disabled = true;
      files.reduce(function (chain, file) {
        return chain.then(function () { return upload(file, { folder_id: folderId }); });
      }, Promise.resolve()).then(function () {
        reloadWith('uploaded');
      }, function (err) {
        input.disabled = false;
        input.value = '';
        fail(err);
      });
    });
  }

  // After a reload: every upload this tab had under way is offered again, from the server's offset; the
  // page cannot read the file again by itself, so the member picks it (the same name and size) once more.
  var resumePanel = document.getElementById('resume-panel');
  var resumeList = document.getElementById('resume-list');
  function offerResume(entry, got) {
    var pct = entry.size ? Math.floor((got / entry.size) * 100) : 100;
    var picker = el('input', { type: 'file', class: 'resume-input', 'aria-label': 'Choose ' + entry.name + ' again to continue' });
    var discard = el('button', { type: 'button', class: 'secondary resume-discard', text: 'Discard' });
    var item = el('li', { 'data-token': entry.token }, [
      el('span', { class: 'resume-text', text: entry.name + ' stopped at ' + pct + '% (' + formatBytes(got) + ' of ' + formatBytes(entry.size) + '). Choose the same file to continue: ' }),
      picker,
      discard,
    ]);
    picker.addEventListener('change', function () {
      var file = picker.files && picker.files[0];
      if (!file) return;
      if (file.size !== entry.size || file.name !== entry.name) {
        picker.value = '';
        say('That is not the same file: choose ' + entry.name + ' (' + formatBytes(entry.size) + ').');
        return;
      }
      say('');
      picker.disabled = true;
      receivedBytes(entry.token).then(function (now) {
        return finish(entry, file, now);
      }).then(function () {
        reloadWith('uploaded');
      }, function (err) {
        picker.disabled = false;
        picker.value = '';
        fail(err);
      });
    });
    discard.addEventListener('click', function () {
      forget(entry.token);
      item.remove();
      if (!resumeList.children.length) resumePanel.hidden = true;
    });
    resumeList.appendChild(item);
    resumePanel.hidden = false;
  }
  if (resumePanel && resumeList) {
    pendingUploads().forEach(function (entry) {
      receivedBytes(entry.token).then(function (got) {
        offerResume(entry, got);
      }, function (err) {
        // Completed, expired or not ours any more: nothing to continue.
        if (err.status === 404) forget(entry.token);
      });
    });
  }

  // ---- Folder, rename, trash ------------------------------------------------------------------------
  var folderForm = document.getElementById('folder-form');
  if (folderForm) {
    folderForm.addEventListener('submit', function (e) {
      e.preventDefault();
      var name = document.getElementById('folder-name').value;
      var body = { name: name };
      if (folderId !== null) body.parent_id = folderId;
      var sealedBox = document.getElementById('folder-sealed');
      if (sealedBox && sealedBox.checked) body.sealed = true;
      window.serviceApi.post('drive_folder_create', body).then(function () { reloadWith('folder'); }, fail);
    });
  }

  var renaming = null;
  document.getElementById('rename-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var body = Object.assign({ name: document.getElementById('rename-name').value }, renaming.key);
    window.serviceApi.post('drive_rename', body).then(function () { reloadWith('renamed'); }, fail);
  });

  var moving = null;
  var moveForm = document.getElementById('move-form');
  if (moveForm) {
    moveForm.addEventListener('submit', function (e) {
      e.preventDefault();
      var to = document.getElementById('move-target').value;
      var dest = to === '' ? null : Number(to);
      var body = moving.kind === 'folder' ? { folder_id: moving.id, parent_id: dest } : { file_id: moving.id, folder_id: dest };
      window.serviceApi.post('drive_move', body).then(function () { reloadWith('moved'); }, function (err) {
        document.getElementById('move-status').textContent = explain(err);
      });
    });
  }

  var ops = {
    rename: function (t) {
      renaming = t;
      document.getElementById('rename-name').value = t.name;
      showDialog('rename-dialog');
    },
    trash: function (t) {
      window.serviceApi.post('drive_trash', t.key).then(function () { reloadWith('trashed'); }, fail);
    },
    restore: function (t) {
      window.serviceApi.post('drive_restore', t.key).then(function () { reloadWith('restored'); }, fail);
    },
    'delete': function (t) {
      if (!window.confirm('Delete "' + t.name + '" forever? This cannot be undone.')) return;
      window.serviceApi.post('drive_delete_forever', t.key).then(function () { reloadWith('deleted'); }, fail);
    },
    move: function (t) {
      moving = t;
      document.getElementById('move-title').textContent = 'Move "' + t.name + '"';
      document.getElementById('move-status').textContent = '';
      var select = document.getElementById('move-target');
      select.value = folderId === null ? '' : String(folderId);
      // A folder cannot go into itself; the server also refuses anything below it (cycle).
      Array.prototype.forEach.call(select.options, function (o) { o.disabled = t.kind === 'folder' && o.value === String(t.id); });
      showDialog('move-dialog');
    },
    share: openShare,
    links: openLinks,
    versions: openVersions,
  };

  document.addEventListener('click', function (e) {
    var button = e.target.closest && e.target.closest('button[data-op]');
    if (!button) return;
    say('');
    ops[button.getAttribute('data-op')](target(button));
  });

  // ---- Share dialog ---------------------------------------------------------------------------------
  var sharing = null;
  var grantRows = document.getElementById('share-grants');

  function roleSelect(role) {
    var select = el('select', { 'class': 'share-role', 'aria-label': 'Role' }, [
      el('option', { value: 'viewer', text: 'Can view' }),
      el('option', { value: 'editor', text: 'Can edit' }),
    ]);
    select.value = role;
    return select;
  }

  function grantRow(grantee, label, role) {
    var remove = el('button', { type: 'button', 'class': 'link share-remove', text: 'Remove' });
    var row = el('li', { 'class': 'grant', 'data-grantee': grantee }, [el('span', { 'class': 'grantee', text: label }), roleSelect(role), remove]);
    remove.addEventListener('click', function () { row.remove(); });
    return row;
  }

  function renderGrants(data) {
    grantRows.textContent = '';
    Object.keys(data.grants).forEach(function (uid) {
      var who = data.grantees && data.grantees[uid];
      grantRows.appendChild(grantRow(uid, who ? who.email : 'User ' + uid, data.grants[uid]));
    });
    document.getElementById('share-empty').hidden = grantRows.children.length > 0;
  }

  function openShare(t) {
    sharing = t;
    document.getElementById('share-title').textContent = 'Share "' + t.name + '"';
    window.serviceApi.post('drive_shares', t.key).then(function (data) {
      renderGrants(data);
      showDialog('share-dialog');
    }, fail);
  }

  document.getElementById('share-add').addEventListener('submit', function (e) {
    e.preventDefault();
    var email = document.getElementById('share-email');
    if (!email.value) return;
    grantRows.appendChild(grantRow(email.value.trim(), email.value.trim(), document.getElementById('share-new-role').value));
    document.getElementById('share-empty').hidden = true;
    email.value = '';
  });

  document.getElementById('share-save').addEventListener('click', function () {
    var grants = {};
    Array.prototype.forEach.call(grantRows.querySelectorAll('.grant'), function (row) {
      grants[row.getAttribute('data-grantee')] = row.querySelector('.share-role').value;
    });
    var status = document.getElementById('share-status');
    status.textContent = '';
    window.serviceApi.post('drive_share_sync', Object.assign({ grants: grants }, sharing.key)).then(function (data) {
      renderGrants(data);
      status.textContent = 'Sharing saved.';
    }, function (err) {
      status.textContent = explain(err);
    });
  });

  // ---- Links dialog ---------------------------------------------------------------------------------
  var linking = null;
  var linkRows = document.getElementById('link-list');

  function renderLinks(links) {
    linkRows.textContent = '';
    links.forEach(function (link) {
      var revoke = el('button', { type: 'button', 'class': 'link link-revoke', text: 'Revoke' });
      var label = 'Link created ' + link.create_time + (link.expires_time ? ', expires ' + link.expires_time : ', no expiry') + (link.has_password ? ', password' : '');
      var row = el('li', { 'class': 'share-link', 'data-link-id': String(link.link_id) }, [el('span', { text: label }), document.createTextNode(' '), revoke]);
      revoke.addEventListener('click', function () {
        window.serviceApi.post('drive_link_revoke', { link_id: link.link_id }).then(function () {
          row.remove();
          document.getElementById('links-empty').hidden = linkRows.children.length > 0;
        }, function (err) { document.getElementById('link-status').textContent = explain(err); });
      });
      linkRows.appendChild(row);
    });
    document.getElementById('links-empty').hidden = links.length > 0;
  }

  function openLinks(t) {
    linking = t;
    document.getElementById('links-title').textContent = 'Links to "' + t.name + '"';
    document.getElementById('link-created').hidden = true;
    document.getElementById('link-status').textContent = '';
    window.serviceApi.post('drive_shares', t.key).then(function (data) {
      renderLinks(data.links || []);
      showDialog('links-dialog');
    }, fail);
  }

  function contractTime(local) {
    // <input type=datetime-local> is the viewer's local time; the API takes UTC 'YYYY-MM-DD HH:MM:SS'.
    var d = new Date(local);
    return d.toISOString().slice(0, 19).replace('T', ' ');
  }

  document.getElementById('link-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var body = { file_id: linking.id };
    var expires = document.getElementById('link-expires').value;
    var password = document.getElementById('link-password').value;
    if (expires) body.expires_time = contractTime(expires);
    if (password) body.password = password;
    var status = document.getElementById('link-status');
    status.textContent = '';
    window.serviceApi.post('drive_link_create', body).then(function (link) {
      var shown = document.getElementById('link-url');
      shown.textContent = new URL(link.url, window.location.origin).toString();
      document.getElementById('link-created').hidden = false;
      document.getElementById('link-password').value = '';
      return window.serviceApi.post('drive_shares', linking.key).then(function (data) { renderLinks(data.links || []); });
    }).catch(function (err) { status.textContent = explain(err); });
  });

  // ---- Versions dialog ------------------------------------------------------------------------------
  var versioning = null;
  var versionRows = document.getElementById('version-list');

  function openVersions(t) {
    versioning = t;
    document.getElementById('versions-title').textContent = 'Versions of "' + t.name + '"';
    document.getElementById('version-status').textContent = '';
    window.serviceApi.post('drive_versions', t.key).then(function (data) {
      versionRows.textContent = '';
      // Viewers see the history; only the owner and editors add to it or restore from it.
      document.getElementById('version-upload').hidden = !t.canEdit;
      data.versions.forEach(function (v) {
        var restore = el('button', { type: 'button', 'class': 'link version-restore', text: 'Restore' });
        restore.hidden = !t.canEdit;
        restore.addEventListener('click', function () {
          window.serviceApi.post('drive_version_restore', { file_id: t.id, version_id: v.version_id }).then(function () { reloadWith('version_restored'); }, function (err) {
            document.getElementById('version-status').textContent = explain(err);
          });
        });
        versionRows.appendChild(el('li', { 'class': 'version', 'data-version-id': String(v.version_id) }, [
          el('span', { text: v.create_time + ' · ' + formatBytes(v.size_bytes) }), document.createTextNode(' '), restore,
        ]));
      });
      document.getElementById('versions-empty').hidden = data.versions.length > 0;
      showDialog('versions-dialog');
    }, fail);
  }

  document.getElementById('version-input').addEventListener('change', function () {
    var file = this.files[0];
    if (!file) return;
    closeDialog();
    upload(file, { file_id: versioning.id }).then(function () { reloadWith('uploaded'); }, fail);
  });
});
