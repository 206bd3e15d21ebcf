// Admin → Import and export members: sends the chosen CSV as the request body (streamed to storage by the
// server), then opens its preview; on an import's page, follows the job and moves the progress bar.
(function () {
  const form = document.getElementById('upload-form');
  if (form) {
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const input = document.getElementById('csv-file');
      const status = document.getElementById('upload-status');
      const button = document.getElementById('upload-button');
      const file = input.files && input.files[0];
      if (!file) {
        status.textContent = 'Choose a CSV file first.';
        return;
      }
      button.disabled = true;
      status.textContent = `Uploading ${file.name}…`;
      try {
        const res = await fetch(form.action, {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'content-type': 'application/octet-stream', 'x-form-token': form.dataset.token, 'x-file-name': encodeURIComponent(file.name) },
          body: file,
        });
        const body = await res.json().catch(() => ({}));
        if (!res.ok) throw new Error(body.error || `The upload failed (${res.status})`);
        status.textContent = 'Reading the file…';
        window.location.assign(body.preview_url);
      } catch (e) {
        status.textContent = e.message;
        button.disabled = false;
      }
    });
  }

  const job = document.getElementById('job');
  if (job && job.dataset.status !== 'done' && job.dataset.status !== 'failed') {
    const labels = { queued: 'Waiting to start', running: 'Importing', done: 'Done', failed: 'Failed' };
    const follow = async () => {
      try {
        const res = await fetch(`${window.location.pathname}/status`, { credentials: 'same-origin' });
        if (res.ok) {
          const j = await res.json();
          const pct = Math.round(j.progress * 100);
          const bar = document.getElementById('import-progress');
          bar.value = pct;
          bar.textContent = `${pct}%`;
          document.getElementById('job-status').textContent = labels[j.status] || j.status;
          document.getElementById('job-counts').textContent = `${j.rows} rows read: ${j.counts.create} created · ${j.counts.update} updated · ${j.counts.unchanged} unchanged · ${j.counts.error} skipped`;
          if (j.ended) {
            window.location.reload();
            return;
          }
        }
      } catch {
        // A missed poll is retried on the next tick.
      }
      setTimeout(follow, 1000);
    };
    setTimeout(follow, 500);
  }
})();
