// Copy to the clipboard with visible feedback. The async Clipboard API
// exists only in secure contexts (https, localhost): on a plain http://
// origin (a Docker or Kubernetes deployment) the copy goes through a
// selected text field and execCommand('copy'); when even that is refused
// the text is shown selected, for the user to copy by hand.
import { el, clear, announce } from './util.js';

function legacyCopy(text) {
  const ta = el('textarea', { class: 'copy-buffer', readonly: true, 'aria-hidden': 'true', tabindex: -1 });
  ta.value = text;
  document.body.append(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  ta.remove();
  return ok;
}

function say(status, kind, text) {
  clear(status);
  status.className = `copy-status ${kind}`;
  status.append(text);
  clearTimeout(status.copyTimer);
  if (kind === 'ok') status.copyTimer = setTimeout(() => { clear(status); }, 6000);
  announce(typeof text === 'string' ? text : status.textContent);
}

// Copies `text`; `status` is the element that says what happened.
export async function copyText(text, what, status) {
  const focus = document.activeElement;
  let ok = false;
  if (window.isSecureContext && navigator.clipboard && navigator.clipboard.writeText) {
    try {
      await navigator.clipboard.writeText(text);
      ok = true;
    } catch {
      ok = false;
    }
  }
  if (!ok) ok = legacyCopy(text);
  if (focus && focus.focus) focus.focus();
  if (ok) {
    say(status, 'ok', `✓ Copied the ${what} to the clipboard.`);
    return true;
  }
  const manual = el('textarea', { class: 'copy-manual', readonly: true, rows: 3, 'aria-label': `The ${what}, to copy by hand` });
  manual.value = text;
  const box = el('span', {},
    `⚠ This page may not use the clipboard here (${window.isSecureContext ? 'the browser refused' : 'the page is not served over https'}): the ${what} is selected below, press Ctrl+C (⌘C) to copy it.`,
    manual);
  say(status, 'error', box);
  manual.focus();
  manual.select();
  return false;
}
