// A select marked data-autosubmit submits its form when changed (an inline
// onchange handler would be blocked by the Content-Security-Policy).
document.addEventListener("change", (event) => {
  if (event.target.matches("select[data-autosubmit]")) event.target.form.submit();
});
