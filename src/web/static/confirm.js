// Forms that change something hard to undo carry data-confirm="question": the browser asks first, and
// the form is sent only when the user agrees. (Inline handlers are blocked by the page's CSP.)
document.addEventListener('submit', function (e) {
  var form = e.target;
  var question = form && form.getAttribute && form.getAttribute('data-confirm');
  if (question && !window.confirm(question)) e.preventDefault();
});
