/** Bounds one line and one event's data of a stream, in UTF-16 code units. */
export declare const MAX_EVENT_CHARS: number;
/** One server-sent event: its name ("message" when none was given) and its data text. */
export interface ServerEvent {
    event: string;
    data: string;
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
 */
export declare class EventStreamParser {
    #private;
    /** Feeds the next chunk of text; returns the events it completed. */
    push(text: string): ServerEvent[];
}
