// The texts ChatGPT's page shows, in every UI language the adapter reads, and the reader of
// the reset times in usage-limit notices. Structure comes first (test ids, roles, the Retry
// control, a turn's position): these texts are read only where structure cannot tell one
// state from another (which error card, which dialog, which limit). Every pattern comes from
// a real source; extension/test/fixtures/pages/locales/LOCALES.md names each with its date.
// Classic content script loaded before turns.js and selectors.js: defines globalThis.OrcPageTexts, pure
// (no DOM, no clock: reset times are read relative to a time passed in).
(() => {
  'use strict';

  // Each concept: the patterns of every locale, tested against text whose curly quotes and
  // runs of whitespace were normalized (normalizeText below), where the page's own
  // notices stand (an error-styled element, a live region, a banner, a dialog).
  const TEXTS = Object.freeze({
    deliveryTimeout: [
      /message delivery timed out/i,
    ],
    somethingWentWrong: [
      /^something went wrong\b/i,
      /^there was an error generating a response/i,
      /^an error occurred\b/i,
      /^unknown error occurred/i,
      // The outage card of 2026-02-03 (unotv.com report: es, with the English in parentheses).
      /^hmm\s?(?:…|\.{3})\s?something seems to have gone wrong/i,
      /^hmm\s?(?:…|\.{3})\s?algo parece haber salido mal/i, // es
    ],
    connectionInterrupted: [
      /^connection interrupted/i,
      /^network error\b/i,
      /^stream cache expired/i,
      /^resume stream unavailable/i,
      // The recovery alert's text comes from the server, in English in every UI (ru UI, 2026-10-07).
      /^a network error occurred\b/i,
      /^ネットワークエラー/, // ja
      /^соединение прервано/i, // ru
      /^连接已中断/, // zh-CN (2026-10-02, and the older 连接已中断。正在等待完整回复。)
    ],
    messageStreamError: [
      /^error in message stream/i,
      /^メッセージ ?ストリームでエラーが発生しました/, // ja
    ],
    thinkingFailed: [
      /^thinking failed/i,
      /^analysis errored/i,
      /^o pensamento falhou/i, // pt-BR
    ],
    // The reasoning of the turn was stopped: the turn ended without its answer.
    stoppedThinking: [
      /^stopped thinking$/i,
      /^思考を停止しました$/, // ja
      /^已停止思考$/, // zh-CN
      /^已中斷思考$/, // zh-TW
      /^denken gestoppt$/i, // de
      /^réflexion interrompue$/i, // fr
      /^dejó de pensar$/i, // es
      /^pensamento interrompido$/i, // pt-BR
      /^рассуждение остановлено$/i, // ru
      /^생각 중지됨$/, // ko
      /^elaborazione interrotta$/i, // it
      /^düşünme durdu$/i, // tr
      // The other locales ChatGPT ships (its locale modules as read on 2026-09-12:
      // miuuyy/codex-chatgpt-web ui-labels.ts@93dc6fc; locales/locale-texts.json _locales).
      /^ማሰብ ቆሟል$/i, // am
      /^توقّف التفكير$/i, // ar
      /^Спря да мисли$/i, // bg-BG
      /^চিন্তা থেমেছে$/i, // bn-BD
      /^Razmišljanje prekinuto$/i, // bs-BA
      /^Pensament interromput$/i, // ca-ES
      /^Přemýšlení zastaveno$/i, // cs-CZ
      /^Tænkning stoppet$/i, // da-DK
      /^Διακόπηκε η σκέψη$/i, // el-GR
      /^Mõtlemine peatati$/i, // et-EE
      /^فرایند فکر کردن متوقف شد$/i, // fa
      /^Ajattelu pysähtyi$/i, // fi-FI
      /^વિચાર કરવાનું બંધ થયું$/i, // gu-IN
      /^सोचना बंद हो गया$/i, // hi-IN
      /^Razmišljanje je zaustavljeno$/i, // hr-HR
      /^Gondolkodás leállítva$/i, // hu-HU
      /^Մտածելու գործընթացը դադարեցվեց$/i, // hy-AM
      /^Berhenti berpikir$/i, // id-ID
      /^Hætti að hugsa$/i, // is-IS
      /^ფიქრი შეწყდა$/i, // ka-GE
      /^Ойлану тоқтатылды$/i, // kk
      /^ಯೋಚನೆ ನಿಂತಿತು$/i, // kn-IN
      /^Nustota mąstyti$/i, // lt
      /^Pārtrauca domāt$/i, // lv-LV
      /^Престана да размислува$/i, // mk-MK
      /^ചിന്തിക്കുന്നത് നിർത്തി$/i, // ml
      /^Бодохоо больсон$/i, // mn
      /^विचार करणे थांबवले$/i, // mr-IN
      /^Berhenti berfikir$/i, // ms-MY
      /^စဉ်းစားမှု ရပ်သွားသည်$/i, // my-MM
      /^Sluttet å tenke$/i, // nb-NO
      /^Het nadenken is gestopt$/i, // nl-NL
      /^ਸੋਚਣਾ ਰੁਕ ਗਿਆ$/i, // pa
      /^Przerwano myślenie$/i, // pl-PL
      /^Analiza s-a oprit$/i, // ro-RO
      /^Premýšľanie sa zastavilo$/i, // sk-SK
      /^Razmišljanje ustavljeno$/i, // sl-SI
      /^Fikirka waa la joojiyay$/i, // so-SO
      /^Ndaloi së menduari$/i, // sq-AL
      /^Размишљање је прекинуто$/i, // sr-RS
      /^Slutade att tänka$/i, // sv-SE
      /^Imeacha kufikiri$/i, // sw-TZ
      /^யோசனை நிறுத்தப்பட்டது$/i, // ta-IN
      /^ఆలోచించడం ఆగింది$/i, // te-IN
      /^หยุดคิดแล้ว$/i, // th-TH
      /^Huminto sa pag-iisip$/i, // tl
      /^Обдумування зупинено$/i, // uk-UA
      /^سوچنا بند کر دیا$/i, // ur
      /^Đã ngừng suy nghĩ$/i, // vi-VN
    ],
    subscriptionFailed: [
      /^failed to load subscription/i,
    ],
    // A developer app the conversation can no longer call (chatgpt-apps notes 1.4: ToolError
    // texts in the expanded tool row, often repeated by the model). English only: no source
    // shows them localized (they come from the tool layer, not the UI strings).
    appUnavailable: [
      /^(?:error:\s*)?forbidden: this conversation (?:does not support|is restricted to) developer mcps/i,
      /^(?:error:\s*)?[\w .'-]{1,80} tool has been disabled\.?$/i,
      /^(?:error:\s*)?resource not found: [\w .'-]{1,80}\.[\w-]{1,80}\.?$/i,
    ],
    // The tool-approval card's title; the capture group is the app's name (chatgpt-apps
    // notes 2.2; test/fixtures/pages/locales/LOCALES.md names the sources per locale).
    approvalTitle: [
      /^allow chatgpt to use (.{1,80}?)\?$/i,
      /^permitir que o chatgpt use (.{1,80}?)\?$/i, // pt-BR
      /^允许 ?chatgpt ?使用 ?(.{1,80}?) ?[？?]$/i, // zh-CN (live 2026-09-30: 允许 ChatGPT 使用 GitHub？)
    ],
    conversationFull: [
      /you've reached the maximum length for this conversation/i,
      /この会話は長さの上限に到達しています/, // ja
      /вы достигли максимальной длины этого обсуждения/i, // ru
      /이 대화의 최대 길이에 도달/, // ko (a fragment: index id 63577220207)
    ],
    usageLimit: [
      /you've (?:reached|hit) (?:your|the|our) [\w\s.-]{0,60}?\b(?:limit|cap)\b/i,
      /\b(?:usage|message) (?:limit|cap) (?:reached|exceeded)\b/i,
      /until (?:your )?(?:limit|usage) resets/i,
      /(?:プラン|Plus|Free|Pro)\s?(?:プラン)?の制限に達しました/i, // ja
    ],
    tooManyRequests: [
      /^too many requests$/i,
      /you're making requests too quickly/i,
      /你的请求过于频繁/, // zh-CN
      /暂时限制你访问对话记录/, // zh-CN
    ],
    suspiciousActivity: [
      /suspicious activity detected/i,
    ],
    sessionExpired: [
      /^your session has expired/i,
    ],
    // The Cloudflare interstitial's title, in the languages it is served in.
    challengeTitle: [
      /^just a moment\.{0,3}$/i,
      /^しばらくお待ちください/, // ja
      /^请稍候/, // zh-CN
      /^請稍候/, // zh-TW
      /^einen moment/i, // de
      /^un instant/i, // fr
      /^un momento/i, // es
      /^aguarde um momento/i, // pt-BR
    ],
    challenge: [
      /verify you are human/i,
      /あなたが人間であることを確認/, // ja
      /确认您是真人|正在验证您是否是真人/, // zh-CN
    ],
    retryLabel: [
      /^(?:retry|try again|regenerate)$/i,
      /^повторить$/i, // ru
    ],
    stopLabel: [
      /\bstop\b/i,
      /停止/, // ja "ストリーミングの停止", zh-CN "停止"
      /^остановить/i, // ru
      /중지/, // ko "스트리밍 중지"
    ],
    // Controls whose label says Stop but that stop no answer: dictation, voice, reading aloud.
    notStopLabel: [
      /dictat|voice|read(?:ing)? aloud|\bspeech\b/i,
    ],
    sendLabel: [
      /^send(?: prompt| message)?$/i,
      /^プロンプトを送信する$/, // ja
      /^发送提示$/, // zh-CN
      /^prompt senden$/i, // de
      /^프롬프트 보내기$/, // ko
      /^отправ/i, // ru (only the prefix is sourced)
    ],
    voiceLabel: [
      /^start voice(?: mode)?$/i,
      /^音声モードを開始する$/, // ja
      /^启动语音功能$/, // zh-CN
      /^voice 시작$/i, // ko
      /^音声入力ボタン$/, // ja
    ],
  });

  // The complete notices the page draws inside a turn's `.markdown` block, where a reply of
  // the model's could also stand: there only a block that is one of these, whole, counts
  // (a reply quoting a notice is longer than the notice).
  const WHOLE = Object.freeze({
    deliveryTimeout: [
      /^message delivery timed out\.?(?: please try again\.?)?$/i,
    ],
    somethingWentWrong: [
      /^something went wrong(?: while generating the response)?\.?(?: if this issue persists,? please contact us through our help center at help\.openai\.com\.?| please try again\.?)?$/i,
      /^there was an error generating a response\.?$/i,
    ],
    connectionInterrupted: [
      /^connection interrupted\.?(?: waiting for the complete answer\.*)?$/i,
      /^network error\.?$/i,
      /^a network error occurred\.?(?: please check your connection and try again\.?)?$/i,
    ],
    messageStreamError: [
      /^error in message stream\.?$/i,
      /^メッセージ ?ストリームでエラーが発生しました。?$/, // ja
    ],
    thinkingFailed: [
      /^thinking failed\.?$/i,
      /^o pensamento falhou\.?$/i, // pt-BR
    ],
    stoppedThinking: TEXTS.stoppedThinking,
    // The model repeating a ToolError as its whole reply (a reply that quotes one is longer).
    appUnavailable: TEXTS.appUnavailable,
    conversationFull: [
      /^you've reached the maximum length for this conversation[,.].{0,120}$/i,
      /^この会話は長さの上限に到達しています.{0,60}$/, // ja
      /^вы достигли максимальной длины этого обсуждения[,.].{0,120}$/i, // ru
    ],
  });

  // Words around a reset time. `ampm` maps a marker to the half of the day; a marker may
  // stand before the time (午後4:04, 下午4:04) or after it (4:04 PM).
  const RESET_WORDS = Object.freeze({
    pm: /^(?:p\.?\s?m\.?|午後|下午|晚上)$/i,
    am: /^(?:a\.?\s?m\.?|午前|上午|早上|凌晨)$/i,
    tomorrow: /\b(?:tomorrow|morgen|demain|mañana|amanhã|domani)\b|明日|明天/i,
  });

  // hh:mm with an optional half-of-day marker before or after it.
  const TIME_PATTERN = /(午前|午後|上午|下午|早上|晚上|凌晨)?\s*(\d{1,2})[:：h](\d{2})\s*([ap]\.?\s?m\.?)?/i;
  // "in 3 hours", "in 45 minutes".
  const RELATIVE_PATTERN = /\bin (\d{1,3}) (hours?|minutes?)\b/i;

  const MINUTE_MS = 60_000;
  const HOUR_MS = 60 * MINUTE_MS;
  const DAY_MS = 24 * HOUR_MS;

  // Curly apostrophes and runs of whitespace differ between page versions. A text already
  // in that form is returned as it is: the readers normalize every label and notice on every
  // read, and each copy is garbage.
  function normalizeText(text) {
    const string = String(text);
    if (isNormalized(string)) return string;
    return string.replace(CURLY_APOSTROPHES, "'").replace(WHITE_SPACE_RUNS, ' ').trim();
  }

  const CURLY_APOSTROPHES = /[\u2018\u2019\u02bc]/g;
  const WHITE_SPACE_RUNS = /\s+/g;

  // Whether normalizeText would leave `string` as it is: no curly apostrophe, no white space
  // at either end, and no white space but single spaces.
  function isNormalized(string) {
    const last = string.length - 1;
    for (let i = 0; i <= last; i += 1) {
      const code = string.charCodeAt(i);
      if (code === 0x2018 || code === 0x2019 || code === 0x02bc) return false;
      if (isWhitespace(code) && (i === 0 || i === last || code !== 0x20 || isWhitespace(string.charCodeAt(i + 1)))) return false;
    }
    return true;
  }

  /** Whether a UTF-16 code unit is what `\s` matches (normalizeText collapses it): white space or a line terminator. */
  function isWhitespace(code) {
    return (code >= 0x09 && code <= 0x0d) || code === 0x20 || code === 0xa0 || code === 0x1680
      || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f
      || code === 0x205f || code === 0x3000 || code === 0xfeff;
  }

  function matchesAny(concept, text) {
    return someMatches(TEXTS[concept], text);
  }

  /** The first capture of the first pattern of `concept` that matches `text`, or null. */
  function captureOf(concept, text) {
    for (const pattern of TEXTS[concept]) {
      const match = pattern.exec(text);
      if (match) return match[1] ?? null;
    }
    return null;
  }

  /** Whether `text` is, whole, one of the notices of `concept` (see WHOLE). */
  function matchesWhole(concept, text) {
    return someMatches(WHOLE[concept] ?? [], text);
  }

  // A loop rather than `some`: the readers call these for every notice on every read.
  function someMatches(patterns, text) {
    for (let i = 0; i < patterns.length; i += 1) if (patterns[i].test(text)) return true;
    return false;
  }

  /**
   * When a usage-limit notice says the limit lifts, as `{hour, minute, dayOffset}` (a wall
   * clock time in the page's time zone) or `{inMs}` (relative), or null when it names no time
   * this reader knows (a date, a weekday: the limit is then held without a known reset).
   */
  function readResetTime(text) {
    const relative = RELATIVE_PATTERN.exec(text);
    if (relative) {
      const amount = Number(relative[1]);
      return { inMs: amount * (/^hour/i.test(relative[2]) ? HOUR_MS : MINUTE_MS) };
    }
    const time = TIME_PATTERN.exec(text);
    if (!time) return null;
    let hour = Number(time[2]);
    const minute = Number(time[3]);
    const marker = time[1] ?? time[4] ?? null;
    if (hour > 23 || minute > 59) return null;
    if (marker !== null) {
      if (hour < 1 || hour > 12) return null;
      const pm = RESET_WORDS.pm.test(marker.replace(/\s/g, ''));
      hour = (hour % 12) + (pm ? 12 : 0);
    }
    return { hour, minute, dayOffset: RESET_WORDS.tomorrow.test(text) ? 1 : 0 };
  }

  /**
   * The Unix time in ms at which a reset read by readResetTime happens, for a page whose
   * local wall clock is `now` (a Date): the next such time, never in the past.
   */
  function resetAtMs(reset, now) {
    if (reset === null) return null;
    if ('inMs' in reset) return now.getTime() + reset.inMs;
    const at = new Date(now.getTime());
    at.setHours(reset.hour, reset.minute, 0, 0);
    let ms = at.getTime() + reset.dayOffset * DAY_MS;
    if (ms <= now.getTime()) ms += DAY_MS;
    return ms;
  }

  globalThis.OrcPageTexts = Object.freeze({ TEXTS, WHOLE, normalizeText, isWhitespace, matchesAny, matchesWhole, captureOf, readResetTime, resetAtMs });
})();
