// The page shape (issue 15, "drift defence"): a privacy-safe skeleton of the page the content
// adapter failed to read, for a person to attach to a bug report and for
// extension/scripts/shape-to-fixture.mjs to turn into a fixture. It keeps what selectors are
// made of (tag names, known ids, test ids, roles, control labels, class tokens, a short
// allowlist of attributes) and drops everything a person or the model wrote: no text (a text
// node becomes its length class), no attribute value outside the allowlists below, no ids of
// conversations, no titles, no URLs' ids, no input values. Bounded in nodes, depth and bytes:
// a run of many similar siblings (400 turns) keeps its first and last few.
// Classic content script, loaded after selectors.js and before overlay.js into the same
// isolated world: it defines globalThis.OrcPageShape and touches nothing on the page. Its core
// reads a minimal node interface (nodeType, localName, attributes, childNodes, data), so
// the unit tests run it in Node over plain objects.
(() => {
  'use strict';

  const VERSION = 1;

  const LIMITS = Object.freeze({
    nodesMax: 5000, // elements and text markers in one shape (SHAPE_NODES_MAX)
    bytesMax: 512 * 1024, // the shape's JSON, estimated while it is built (cut there)
    depthMax: 60, // element nesting below <html>
    childrenBeforeCollapseMax: 12, // more children than this are collapsed ...
    childrenKeptHead: 3, // ... to the first three ...
    childrenKeptTail: 3, // ... and the last three, with a {collapsed: K} marker between
    classTokenCharsMax: 40,
    classTokensMax: 40, // per element
    labelCharsMax: 60, // a control's aria-label
    testIdCharsMax: 80,
    textShortCharsMax: 80, // a text node up to this length is 'short', longer is 'long'
    urlSegmentsMax: 8,
  });

  // The value every attribute gets whose real value is not in an allowlist: it says the
  // attribute was there without saying what it held. Stable under a second pass.
  const REDACTED = 'redacted';
  const ID_SEGMENT = '<id>';
  const FOREIGN_HOST = 'host.invalid';
  const TITLE_TOKEN = 'redacted';

  // Elements whose contents are dropped (the tag stays): code, styles, pictures, frames.
  const OPAQUE = new Set(['script', 'style', 'svg', 'math', 'noscript', 'template', 'iframe', 'canvas', 'object', 'video', 'audio', 'picture']);
  // Never part of a shape: this extension's own overlay, and comment-like nodes.
  const OWN = new Set(['orchestrator-overlay']);

  // Structural ids chatgpt.com and the fixtures use (selectors.js relies on some of them).
  const KNOWN_IDS = new Set([
    'prompt-textarea', 'composer-submit-button', 'composer-background', 'composer-form', 'composer-trailing-actions',
    'thread', 'thread-bottom', 'thread-bottom-container', 'main', '__next', 'root', 'page-header',
    'stage-slideover-sidebar', 'stage-sidebar-tiny-bar', 'sidebar', 'history', 'upload-files', 'upload-photos', 'upload-camera',
    'modal-no-auth-login', 'modal-expired-session', 'challenge-form', 'challenge-stage', 'cf-challenge-running',
    'conversation-full-notice', 'system-hint-button', 'mobile-composer-prompt',
  ]);
  // Other ids outside authored text count as structural when they are lowercase words joined
  // by hyphens, without digits, and one of the words is one of these (generated ids such as
  // `radix-:r1:` are redacted; inside a message or the sidebar only KNOWN_IDS are kept, since
  // a heading's slug there is made of the message's words).
  const SAFE_ID_WORDS = new Set(['composer', 'prompt', 'thread', 'modal', 'challenge', 'cf', 'page', 'stage', 'sidebar', 'conversation',
    'header', 'footer', 'main', 'menu', 'dialog', 'toast', 'banner', 'textarea', 'submit', 'button', 'form', 'notice']);
  const SAFE_ID = /^[a-z]+(?:-[a-z]+){0,5}$/;

  const ROLES = new Set([
    'alert', 'alertdialog', 'application', 'article', 'banner', 'button', 'cell', 'checkbox', 'columnheader', 'combobox',
    'complementary', 'contentinfo', 'dialog', 'document', 'feed', 'figure', 'form', 'grid', 'gridcell', 'group', 'heading',
    'img', 'link', 'list', 'listbox', 'listitem', 'log', 'main', 'marquee', 'menu', 'menubar', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'navigation', 'none', 'note', 'option', 'presentation', 'progressbar', 'radio', 'radiogroup', 'region',
    'row', 'rowgroup', 'rowheader', 'scrollbar', 'search', 'searchbox', 'separator', 'slider', 'spinbutton', 'status', 'switch',
    'tab', 'table', 'tablist', 'tabpanel', 'term', 'textbox', 'timer', 'toolbar', 'tooltip', 'tree', 'treegrid', 'treeitem',
    'generic', 'paragraph',
  ]);
  // Where an aria-label is a control's label (what a person clicks), not content.
  const CONTROL_TAGS = new Set(['button', 'a', 'input', 'select', 'textarea', 'dialog', 'summary']);
  const CONTROL_ROLES = new Set(['button', 'link', 'dialog', 'alertdialog', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'switch', 'checkbox', 'radio', 'textbox', 'combobox', 'option']);
  const TYPES = new Set(['button', 'submit', 'reset', 'text', 'search', 'file', 'checkbox', 'radio', 'email', 'password', 'url', 'number', 'range', 'tel', 'image']);

  // Attributes whose value is a word from a closed set: kept when it is one, REDACTED otherwise.
  const WORDS = new Set(['', 'true', 'false', 'on', 'off', 'open', 'closed', 'checked', 'unchecked', 'indeterminate', 'active', 'inactive',
    'visible', 'hidden', 'delayed-open', 'instant-open', 'user', 'assistant', 'system', 'tool', 'critic', 'page', 'step', 'location',
    'date', 'time', 'menu', 'listbox', 'tree', 'grid', 'polite', 'assertive', 'horizontal', 'vertical', 'ltr', 'rtl', 'auto',
    'plaintext-only', 'start', 'end', 'center', 'top', 'bottom', 'left', 'right', 'no', 'yes']);
  const WORD_ATTRS = new Set([
    'aria-disabled', 'aria-hidden', 'aria-expanded', 'aria-haspopup', 'aria-live', 'aria-modal', 'aria-pressed', 'aria-checked',
    'aria-selected', 'aria-busy', 'aria-current', 'aria-orientation', 'aria-multiline', 'aria-readonly', 'aria-atomic',
    'contenteditable', 'dir', 'translate', 'spellcheck', 'draggable',
    'data-turn', 'data-message-author-role', 'data-message-role', 'data-conversation-role', 'data-state', 'data-scroll-anchor',
    'data-side', 'data-align', 'data-orientation', 'data-disabled', 'data-lexical-editor', 'data-composer-markdown',
    'data-composer-submit', 'data-chatgpt-composer', 'data-conversation-transcript', 'data-headlessui-state',
  ]);
  // Attributes kept as mere presence (their value, if any, becomes '').
  const FLAGS = new Set(['disabled', 'hidden', 'open', 'readonly', 'required', 'multiple', 'checked', 'inert']);
  // Attributes naming other elements' ids: the references are redacted like ids.
  const ID_REFS = new Set(['aria-controls', 'aria-labelledby', 'aria-describedby', 'aria-owns', 'for', 'form']);
  // Other data-* names the page uses are kept (the name is markup, written by ChatGPT's
  // developers) with their value redacted, when the name is plain words without digits.
  const DATA_NAME = /^data-[a-z]+(?:-[a-z]+)*$/;
  const DATA_NAME_CHARS_MAX = 40;
  const CLASS_TOKEN = /^[a-z0-9_:\-[\]/.%#]+$/i;

  // Address parts that are words of chatgpt.com's own routes; every other part is an id.
  const KNOWN_SEGMENTS = new Set(['c', 'uc', 'g', 'gpts', 'auth', 'login', 'logout', 'project', 'projects', 'library', 'codex', 'share',
    'settings', 'backend-api', 'api', 'cdn-cgi', 'challenge-platform', 'images', 'search', 'discover', 'mine', 'editor', 'tasks', 'sora',
    'apps', 'admin', 'workspace', 'memory', 'chat', 'new', 'help']);
  const KNOWN_HOSTS = new Set(['chatgpt.com', 'chat.openai.com', 'openai.com', 'auth.openai.com', 'cdn.oaistatic.com',
    'challenges.cloudflare.com', 'help.openai.com']);
  // Which elements' address attributes are kept (redacted): what selectors look for.
  const URL_ATTRS = { a: 'href', iframe: 'src', script: 'src', form: 'action' };

  const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
  const HEX_RUN = /(?<![0-9a-z])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{8,}(?![0-9a-z])/gi;
  const LONG_NUMBER = /\d{7,}/g;
  const TEST_ID = /^[a-z0-9_:.-]+$/i;
  const LANG = /^[a-z]{2,3}(?:-[a-z0-9]{2,8}){0,3}$/i;

  /** An address's path with every part that is not a route word replaced by `<id>`. */
  function redactPath(pathname) {
    const parts = String(pathname ?? '/').split('/').slice(1, 1 + LIMITS.urlSegmentsMax);
    return `/${parts.map((part) => (part === '' || KNOWN_SEGMENTS.has(part.toLowerCase()) ? part : ID_SEGMENT)).join('/')}`;
  }

  /** An address without query, fragment, ids or foreign host names; REDACTED for other schemes. */
  function redactUrl(value) {
    const raw = String(value).trim();
    if (raw === '' || raw === '#' || raw === REDACTED) return raw;
    let url;
    try {
      url = new URL(raw, 'https://chatgpt.com/');
    } catch {
      return REDACTED;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return REDACTED;
    const path = redactPath(url.pathname);
    if (raw.startsWith('/') && !raw.startsWith('//')) return path;
    if (!/^[a-z][a-z0-9+.-]*:/i.test(raw)) return path; // relative without a leading slash
    const host = KNOWN_HOSTS.has(url.hostname) ? url.hostname : FOREIGN_HOST;
    return `${url.protocol}//${host}${path}`;
  }

  /** A test id with uuids, long hex and long numbers replaced; REDACTED when it is no test id. */
  function redactTestId(value) {
    const v = String(value).replace(UUID, 'UUID').replace(HEX_RUN, 'HEX').replace(LONG_NUMBER, 'N');
    return v.length <= LIMITS.testIdCharsMax && TEST_ID.test(v) ? v : REDACTED;
  }

  function safeId(value, authored = false) {
    if (KNOWN_IDS.has(value)) return value;
    return !authored && SAFE_ID.test(value) && value.split('-').some((word) => SAFE_ID_WORDS.has(word)) ? value : REDACTED;
  }

  function classTokens(value) {
    const tokens = String(value).split(/\s+/).filter((t) => t !== '' && t.length <= LIMITS.classTokenCharsMax && CLASS_TOKEN.test(t));
    return [...new Set(tokens)].slice(0, LIMITS.classTokensMax).join(' ');
  }

  // The custom properties a style names (`--vt-composer-speech-button`): how the page marks
  // some controls; every other declaration is dropped.
  function styleTokens(value) {
    const names = String(value).match(/--[a-z][a-z0-9-]{0,60}/gi) ?? [];
    return [...new Set(names)].slice(0, 8).map((name) => `var(${name})`).join(' ');
  }

  function isControl(tag, role) {
    return CONTROL_TAGS.has(tag) || CONTROL_ROLES.has(role);
  }

  function controlLabel(value) {
    const text = String(value).replace(/\s+/g, ' ').trim().replace(UUID, 'UUID');
    return text.length <= LIMITS.labelCharsMax ? text : `${text.slice(0, LIMITS.labelCharsMax)}…`;
  }

  /**
   * The allowlisted attributes of one element, in a stable order. `authored`: the element is
   * inside text people or the model wrote (a message, the draft, the sidebar's chat titles),
   * where even a control's label may quote that text.
   */
  function shapeAttrs(tag, attributes, authored) {
    const byName = new Map();
    for (const attribute of attributes ?? []) byName.set(String(attribute.name).toLowerCase(), String(attribute.value ?? ''));
    const out = {};
    const role = byName.has('role') && ROLES.has(byName.get('role').trim()) ? byName.get('role').trim() : null;
    for (const [name, value] of [...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const kept = attrValue(tag, role, name, value, authored);
      if (kept !== null) out[name] = kept;
    }
    return out;
  }

  function attrValue(tag, role, name, value, authored) {
    if (name === 'id') return safeId(value, authored);
    if (name === 'class') return classTokens(value) || null;
    if (name === 'role') return role;
    if (name === 'data-testid') return redactTestId(value);
    if (name === 'type') return TYPES.has(value.toLowerCase()) ? value.toLowerCase() : null;
    if (name === 'lang') return LANG.test(value) ? value : REDACTED;
    if (name === 'aria-label') return isControl(tag, role) && !authored ? controlLabel(value) : null;
    if (name === 'style') return styleTokens(value) || null;
    if (URL_ATTRS[tag] === name) return redactUrl(value);
    if (FLAGS.has(name)) return '';
    if (ID_REFS.has(name)) return value.split(/\s+/).filter(Boolean).map((ref) => safeId(ref, authored)).join(' ');
    if (WORD_ATTRS.has(name)) return WORDS.has(value) ? value : REDACTED;
    if (name.startsWith('data-') && name.length <= DATA_NAME_CHARS_MAX && DATA_NAME.test(name)) return value === '' ? '' : REDACTED;
    // title, alt, placeholder, value, name, href/src elsewhere, aria-description, every
    // event handler and whatever else: dropped.
    return null;
  }

  function textClass(data) {
    const text = String(data).replace(/\s+/g, ' ').trim();
    if (text === '') return null;
    return text.length <= LIMITS.textShortCharsMax ? 'short' : 'long';
  }

  // Elements written by people or the model, whose labels are content (selectors.js's
  // authoredText): a message body, the composer, the sidebar.
  // In a form (the composer's), a labelled group is a person's file: its tile is named by the
  // file's name, and so is its Remove button (SOURCES.md section 8).
  function startsAuthored(tag, attributes, inForm) {
    if (tag === 'nav' || tag === 'aside' || tag === 'textarea') return true;
    if (inForm && isPersonsFile(attributes)) return true;
    for (const attribute of attributes ?? []) {
      const name = String(attribute.name).toLowerCase();
      const value = String(attribute.value ?? '');
      if (name === 'class' && /(?:^|\s)markdown(?:\s|$)/.test(value)) return true;
      if (name === 'data-message-author-role' && value === 'user') return true;
      if (name === 'contenteditable' && value !== 'false') return true;
      if (name === 'id' && value === 'prompt-textarea') return true;
    }
    return false;
  }

  function isPersonsFile(attributes) {
    let group = false;
    let labelled = false;
    for (const attribute of attributes ?? []) {
      const name = String(attribute.name).toLowerCase();
      if (name === 'role' && String(attribute.value ?? '').trim() === 'group') group = true;
      if (name === 'aria-label' || name === 'aria-labelledby') labelled = true;
    }
    return group && labelled;
  }

  function isHiddenInput(tag, attributes) {
    if (tag !== 'input') return false;
    for (const attribute of attributes ?? []) if (String(attribute.name).toLowerCase() === 'type' && String(attribute.value).toLowerCase() === 'hidden') return true;
    return false;
  }

  function elementTag(node) {
    return String(node.localName ?? node.tagName ?? '').toLowerCase();
  }

  // The children that count: elements that are part of shapes and text that is not blank.
  function significantChildren(node) {
    const out = [];
    for (const child of node.childNodes ?? []) {
      if (child.nodeType === 3) {
        if (textClass(child.data) !== null) out.push(child);
      } else if (child.nodeType === 1) {
        const tag = elementTag(child);
        if (!OWN.has(tag) && !hasAttr(child, 'data-orc-overlay') && !isHiddenInput(tag, child.attributes)) out.push(child);
      }
    }
    return out;
  }

  function hasAttr(node, name) {
    for (const attribute of node.attributes ?? []) if (attribute.name === name) return true;
    return false;
  }

  // The JSON size of an element without its children: `{"tag":"…","attrs":{…},"children":[]}`
  // plus a comma; attribute values are plain (escaping adds little for these allowlists).
  const TEXT_MARKER_BYTES = '{"text":"short"},'.length;
  function estimatedBytes(element) {
    let bytes = 36 + element.tag.length;
    for (const [name, value] of Object.entries(element.attrs)) bytes += name.length + value.length + 6;
    return bytes;
  }

  /**
   * The skeleton of the element `root` (usually document.documentElement): `{tag, attrs,
   * children}` with `{text: 'short' | 'long'}` for text and `{collapsed: K}` for a run cut
   * out, plus how many nodes it holds and whether a limit cut it.
   */
  function shapeTree(root) {
    if (root === null || root === undefined || root.nodeType !== 1) throw new TypeError('pageShape: the root must be an element');
    const budget = { nodes: 0, bytes: 0, truncated: false };
    const tree = shapeElement(root, 0, false, false, budget);
    return { tree, nodes: budget.nodes, truncated: budget.truncated };
  }

  function shapeElement(node, depth, authoredAbove, inFormAbove, budget) {
    const tag = elementTag(node);
    const inForm = inFormAbove || tag === 'form';
    const authored = authoredAbove || startsAuthored(tag, node.attributes, inForm);
    budget.nodes += 1;
    const out = { tag, attrs: shapeAttrs(tag, node.attributes, authoredAbove), children: [] };
    budget.bytes += estimatedBytes(out);
    if (OPAQUE.has(tag)) return out;
    if (depth >= LIMITS.depthMax) {
      out.cut = 'depth';
      budget.truncated = true;
      return out;
    }
    const children = significantChildren(node);
    const collapse = children.length > LIMITS.childrenBeforeCollapseMax;
    const kept = collapse ? [...children.slice(0, LIMITS.childrenKeptHead), null, ...children.slice(-LIMITS.childrenKeptTail)] : children;
    for (const child of kept) {
      if (budget.nodes >= LIMITS.nodesMax || budget.bytes >= LIMITS.bytesMax) {
        out.cut = budget.nodes >= LIMITS.nodesMax ? 'nodes' : 'bytes';
        budget.truncated = true;
        break;
      }
      if (child === null) {
        out.children.push({ collapsed: children.length - LIMITS.childrenKeptHead - LIMITS.childrenKeptTail });
      } else if (child.nodeType === 3) {
        budget.nodes += 1;
        budget.bytes += TEXT_MARKER_BYTES;
        out.children.push({ text: textClass(child.data) });
      } else {
        out.children.push(shapeElement(child, depth + 1, authored, inForm, budget));
      }
    }
    return out;
  }

  // What the allow-list did not recognize, as the shape keeps it: where, and the structural
  // part of the descriptor (vocabulary.js describe: tag, role, test id, class tokens), never
  // the label that follows it in quotes; null otherwise.
  const UNRECOGNIZED_PLACES = new Set(['latest turn', 'composer']);
  const UNRECOGNIZED_WHAT = /^[a-z0-9[\]=._@/:() -]{1,160}$/i;
  function unrecognizedPart(unrecognized) {
    if (!unrecognized || !UNRECOGNIZED_PLACES.has(unrecognized.where)) return null;
    const what = String(unrecognized.what ?? '').split(' "')[0].trim();
    return { where: unrecognized.where, what: UNRECOGNIZED_WHAT.test(what) ? what : REDACTED };
  }

  /**
   * The page shape of `doc`: `{version, layout, missing, unrecognized, title, path, lang,
   * nodes, truncated, tree}`, plain JSON. `layout`, `missing` and `unrecognized` come from the
   * facts (selectors.js: the layout profile that matched, what was not found, what the
   * allow-list could not name, without its label).
   */
  function pageShape(doc, { layout = null, missing = [], unrecognized = null } = {}) {
    const root = doc?.documentElement ?? null;
    const { tree, nodes, truncated } = shapeTree(root);
    const lang = String(root.getAttribute?.('lang') ?? '');
    return {
      version: VERSION,
      layout: typeof layout === 'string' && /^[a-z0-9-]{1,40}$/.test(layout) ? layout : null,
      missing: (Array.isArray(missing) ? missing : []).filter((m) => typeof m === 'string' && /^[a-z ]{1,40}$/.test(m)).slice(0, 10),
      unrecognized: unrecognizedPart(unrecognized),
      title: String(doc.title ?? '') === '' ? '' : TITLE_TOKEN,
      path: redactPath(doc.location?.pathname ?? '/'),
      lang: LANG.test(lang) ? lang : '',
      nodes,
      truncated,
      limits: { nodesMax: LIMITS.nodesMax, depthMax: LIMITS.depthMax, childrenBeforeCollapseMax: LIMITS.childrenBeforeCollapseMax },
      tree,
    };
  }

  globalThis.OrcPageShape = Object.freeze({
    VERSION,
    LIMITS,
    REDACTED,
    pageShape,
    shapeTree,
    redactPath,
    redactUrl,
    redactTestId,
    classTokens,
  });
})();
