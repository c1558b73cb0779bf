// The daemon WebSocket for the background: one socket per connection id, its events
// turned into executor inputs. Text frames only; anything else reaches the decoder as a
// non-string and is refused there as malformed.

/** WebSocket close reasons are limited to 123 bytes; ours are cut shorter. */
const CLOSE_REASON_CHARS_MAX = 100;

/** WebSocket readyState OPEN. */
const OPEN = 1;

export class Sockets {
  #sockets = new Map();

  /** `on`: {opened(id), message(id, data), closed(id, detail)}. */
  constructor(on) {
    this.on = on;
  }

  open(connectionId, url) {
    let socket;
    try {
      socket = new WebSocket(url);
    } catch (e) {
      this.on.closed(connectionId, `cannot connect to ${url}: ${e.message}`);
      return;
    }
    this.#sockets.set(connectionId, socket);
    socket.onopen = () => this.on.opened(connectionId);
    socket.onmessage = (event) => this.on.message(connectionId, event.data);
    socket.onclose = (event) => {
      this.#sockets.delete(connectionId);
      this.on.closed(connectionId, `closed (code ${event.code}${event.reason ? `: ${event.reason}` : ''})`);
    };
  }

  close(connectionId, reason) {
    const socket = this.#sockets.get(connectionId);
    if (!socket) return;
    this.#sockets.delete(connectionId);
    socket.onclose = null;
    try {
      socket.close(1000, String(reason ?? '').slice(0, CLOSE_REASON_CHARS_MAX));
    } catch {
      socket.close();
    }
  }

  /** Sends on an open socket; false when it is not open (the executor's hello covers it later). */
  send(connectionId, text) {
    const socket = this.#sockets.get(connectionId);
    if (socket?.readyState !== OPEN) return false;
    socket.send(text);
    return true;
  }
}
