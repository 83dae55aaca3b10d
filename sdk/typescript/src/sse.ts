/** Bounds one line and one event's data of a stream, in UTF-16 code units. */
export const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/** One server-sent event: its name ("message" when none was given) and its data text. */
export interface ServerEvent {
  event: string;
  data: string;
}

/** A comment line of a stream (": ping" reads as { comment: "ping" }). */
export interface ServerComment {
  comment: string;
}

/**
 * Reads text/event-stream as the HTML standard's parser does, one decoded
 * chunk at a time: lines end with \n, \r\n or \r (a chunk may end between
 * \r and \n); a line starting with ":" is a comment; "name:value" loses one
 * space after the colon; a line without a colon is a field with an empty
 * value; "data" lines of one event join with \n; a blank line dispatches
 * the event if it has data (an "event" line alone dispatches nothing);
 * other fields (id, retry) are ignored. What it returns does not depend on
 * how the text is split into chunks. A line or data over MAX_EVENT_CHARS
 * throws a RangeError.
 *
 * This is Ratchet's one event-stream parser: the dashboard loads it as
 * internal/web/assets/sse.js, which scripts/generate copies from the
 * compiled dist/sse.js (a test fails when the copy is stale).
 */
export class EventStreamParser {
  #line = "";
  #skipLF = false;
  #event = "";
  #data = "";
  #hasData = false;

  /** Feeds the next chunk of text; returns the events it completed. */
  push(text: string): ServerEvent[] {
    const out: ServerEvent[] = [];
    this.#feed(text, out, false);
    return out;
  }

  /**
   * Feeds the next chunk of text; returns the events and the comment lines
   * it completed, in stream order (a comment says the stream is alive).
   */
  pushWithComments(text: string): Array<ServerEvent | ServerComment> {
    const out: Array<ServerEvent | ServerComment> = [];
    this.#feed(text, out, true);
    return out;
  }

  #feed(text: string, out: Array<ServerEvent | ServerComment>, comments: boolean): void {
    let i = 0;
    while (i < text.length) {
      if (this.#skipLF) {
        this.#skipLF = false;
        if (text.charCodeAt(i) === 10) {
          i++;
          continue;
        }
      }
      let j = i;
      while (j < text.length) {
        const c = text.charCodeAt(j);
        if (c === 10 || c === 13) break;
        j++;
      }
      if (this.#line.length + (j - i) > MAX_EVENT_CHARS) throw new RangeError(`event stream: a line longer than ${MAX_EVENT_CHARS} characters`);
      this.#line += text.slice(i, j);
      if (j === text.length) break;
      this.#skipLF = text.charCodeAt(j) === 13;
      i = j + 1;
      const line = this.#line;
      this.#line = "";
      this.#endLine(line, out, comments);
    }
  }

  #endLine(line: string, out: Array<ServerEvent | ServerComment>, comments: boolean): void {
    if (line === "") {
      if (this.#hasData) out.push({ event: this.#event || "message", data: this.#data });
      this.#event = "";
      this.#data = "";
      this.#hasData = false;
      return;
    }
    if (line.charCodeAt(0) === 58) {
      // ":" comment
      if (comments) out.push({ comment: line.slice(1).replace(/^ /, "") });
      return;
    }
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (name === "event") {
      this.#event = value;
    } else if (name === "data") {
      if (this.#data.length + value.length + 1 > MAX_EVENT_CHARS) throw new RangeError(`event stream: an event's data longer than ${MAX_EVENT_CHARS} characters`);
      this.#data = this.#hasData ? this.#data + "\n" + value : value;
      this.#hasData = true;
    }
  }
}
