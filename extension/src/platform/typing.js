// Keys and text in ChatGPT's composer, as the content adapter (content.js) puts them there:
// a key pressed as a person would (the `@` popover's arrows, Enter, Escape), text typed at the
// end of what the composer holds (a chosen app's pill stays before it), the composer's text
// replaced by a prompt, this script's own text cleared again (never a person's), and a wait
// for a page condition that follows mutations. It decides nothing: what may be typed, and
// when, is content.js's (selectors.js readinessToType). Classic content script, loaded after
// selectors.js and before content.js into the same isolated world: it defines
// globalThis.OrcTyping.
(() => {
  'use strict';

  // How often a wait checks between mutations (a hidden tab's mutations still arrive when its
  // timers are throttled).
  const WAIT_POLL_MS = 100;

  const page = globalThis.OrcSelectors;
  const apps = globalThis.OrcApps;

  function pressKey(target, key) {
    const init = { key, code: key, bubbles: true, cancelable: true, composed: true };
    target.dispatchEvent(new KeyboardEvent('keydown', init));
    target.dispatchEvent(new KeyboardEvent('keyup', init));
  }

  /** Whether two texts are the same but for white space. */
  function sameText(a, b) {
    return a.replace(/\s+/g, '') === b.replace(/\s+/g, '');
  }

  /** Types `text` after what the composer holds (its pill stays), as keystrokes would; true when it took it. */
  function insertAtEnd(composer, text) {
    composer.focus();
    if (composer.tagName === 'TEXTAREA') {
      setTextareaValue(composer, `${composer.value}${text}`);
    } else {
      caretToEnd(composer);
      let inserted = false;
      try {
        inserted = document.execCommand('insertText', false, text);
      } catch {
        inserted = false;
      }
      if (!inserted) return false;
    }
    return page.composerText(composer).endsWith(text);
  }

  function caretToEnd(element) {
    const range = document.createRange();
    range.selectNodeContents(element);
    range.collapse(false);
    const selection = getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  /** Replaces the composer's text with `text`; a chosen app's pill stays before it. True when the composer holds it. */
  function typeInto(composer, text) {
    composer.focus();
    if (composer.tagName === 'TEXTAREA') {
      setTextareaValue(composer, text);
    } else if (apps.findPill(composer, null) !== null) {
      if (page.composerText(composer) !== '') return false;
      caretToEnd(composer);
      try {
        document.execCommand('insertText', false, text);
      } catch {
        return false;
      }
    } else {
      selectAllOf(composer);
      let inserted = false;
      try {
        inserted = document.execCommand('insertText', false, text);
      } catch {
        inserted = false;
      }
      if (!inserted || !sameText(page.composerText(composer), text)) replaceParagraphs(composer, text);
    }
    return sameText(page.composerText(composer), text);
  }

  function selectAllOf(element) {
    const range = document.createRange();
    range.selectNodeContents(element);
    const selection = getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  // Pages built on React ignore a plain `value =`: use the prototype's setter.
  function setTextareaValue(textarea, value) {
    Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(textarea, value);
    textarea.dispatchEvent(new Event('input', { bubbles: true }));
  }

  function replaceParagraphs(composer, text) {
    const paragraphs = text.split('\n').map((line) => {
      const paragraph = document.createElement('p');
      if (line === '') paragraph.append(document.createElement('br'));
      else paragraph.textContent = line;
      return paragraph;
    });
    composer.replaceChildren(...paragraphs);
    composer.dispatchEvent(new InputEvent('input', { inputType: 'insertText', data: text, bubbles: true }));
  }

  /**
   * Empties the composer if it still holds only `ownText` (what content.js typed; never a
   * person's text): true when the composer is empty afterwards. May throw (the caller logs it).
   */
  function clearText(composer, ownText) {
    if (!composer.isConnected || !sameText(page.composerText(composer), ownText ?? '')) return false;
    composer.focus();
    if (composer.tagName === 'TEXTAREA') {
      setTextareaValue(composer, '');
    } else if (apps.findPill(composer, null) !== null) {
      // Only the text after the pill is this script's: delete it backwards, keystroke by keystroke.
      caretToEnd(composer);
      for (let left = page.composerText(composer).length; left > 0; left -= 1) document.execCommand('delete');
    } else {
      selectAllOf(composer);
      if (!document.execCommand('delete')) replaceParagraphs(composer, '');
    }
    return page.composerText(composer) === '';
  }

  /**
   * Resolves with check()'s first truthy value, or null after timeoutMs. Checks on every
   * mutation and on a short poll; a check that throws is passed to `onError` and counts as
   * not yet.
   */
  function waitFor(check, timeoutMs, onError) {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (value) => {
        if (settled) return;
        settled = true;
        observer.disconnect();
        clearInterval(poll);
        clearTimeout(deadline);
        resolve(value);
      };
      const attempt = () => {
        try {
          const value = check();
          if (value) finish(value);
        } catch (error) {
          onError(error);
        }
      };
      const observer = new MutationObserver(attempt);
      observer.observe(document.documentElement, { subtree: true, childList: true, characterData: true, attributes: true });
      const poll = setInterval(attempt, WAIT_POLL_MS);
      const deadline = setTimeout(() => finish(null), timeoutMs);
      attempt();
    });
  }

  globalThis.OrcTyping = Object.freeze({ pressKey, sameText, insertAtEnd, typeInto, clearText, waitFor });
})();
